package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadURL says a URL given to Clone could be read by git as an option.
var ErrBadURL = errors.New("not a git URL")

// Clone copies the repository at url into dest, a directory that must
// not exist yet, for the person's plugins (memory/plugins: a Claude Code
// marketplace or a plugin it lists). It runs the person's git with their
// transport and credentials, as RemoteCommand does, but git starts no
// hook (core.hooksPath=/dev/null, safeConfig) and fetches no submodule:
// a submodule's URL and its checkout are the repository's to choose, and
// what ralph reads of a plugin is its own directory. Only the newest
// commit is fetched (--depth 1): ralph reads files, never history. The
// clone is bounded by SlowTimeout; git removes what a failed one made.
func Clone(ctx context.Context, url, dest string) error {
	if strings.HasPrefix(url, "-") {
		return fmt.Errorf("%w: %q", ErrBadURL, url)
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("cloning into %s: %w", dest, os.ErrExist)
	}
	// On failure git removes the directory it made itself.
	ctx, cancel := context.WithTimeout(ctx, SlowTimeout)
	defer cancel()
	args := []string{"clone", "--depth", "1", "--no-recurse-submodules", "--quiet", "--", url, dest}
	// The parent directory is the person's; no repository's guard
	// applies there, and nothing the model wrote is read.
	cmd := bare(ctx, filepath.Dir(dest), nil, false, true, nil, args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := runWatched(cmd); err != nil {
		return commandError(ctx, SlowTimeout, args, stderr.String(), err)
	}
	return nil
}
