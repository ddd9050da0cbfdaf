package git

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// What a checkpoint takes: the paths whose content differs from ralph's
// index, as git's status lists them, apart from ralph's own state and
// the files over the size bound. Recording them is checkpoint.go's.

// isState reports whether a path (relative to the top) lies in ralph's
// state directory.
func (c *Checkpoints) isState(p string) bool {
	return c.state != "" && (p == c.state || strings.HasPrefix(p, c.state+"/"))
}

// status lists the paths (relative to the top) whose work tree content
// differs from ralph's index, untracked files included, ignored files and
// ralph's own directory not, and apart the untracked files left out for
// their size.
//
// Git keeps the untracked cache only for a status without pathspecs whose
// configured untracked mode matches the one asked for; ralph's directory
// is therefore left out here rather than by an exclude pathspec.
func (c *Checkpoints) status(ctx context.Context, env []string, links *linkCheck) (changed, skipped []string, size int64, err error) {
	out, err := c.statusOut(ctx, env, !c.uncached)
	if err == nil {
		c.uncached = false
	}
	if err == nil && c.staleRepoListed(out) {
		// The untracked cache keeps a nested repository by its name in
		// its parent's listing, and only the parent directory's own
		// change invalidates that: a command that moved the repository's
		// .git deeper (lib/.git to lib/sub/.git) leaves "lib/" listed,
		// which git add then refuses whole for the repository inside.
		// Without the cache (which this status drops, and the next one
		// builds again) git lists what is there.
		out, err = c.statusOut(ctx, env, false)
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		entry := string(rec)
		p := ""
		switch {
		case strings.HasPrefix(entry, "? "):
			p = entry[2:]
		case strings.HasPrefix(entry, "1 "):
			// "1 XY sub mH mI mW hH hI path": Y is the work tree against
			// the index, the only side that matters here.
			if f := strings.SplitN(entry, " ", 9); len(f) == 9 && len(f[1]) == 2 && f[1][1] != '.' {
				p = f[8]
			}
		case strings.HasPrefix(entry, "u "):
			if f := strings.SplitN(entry, " ", 11); len(f) == 11 {
				p = f[10]
			}
		}
		switch {
		case p == "" || c.isState(p):
		case strings.Contains(filepath.Base(p), tempMark):
			// A killed undo's temporary file, which the next one removes.
		case links.beyond(p):
			// Gone from the tree: its size is the link target's.
			changed = append(changed, p)
		case c.tooBig(p, &size):
			skipped = append(skipped, p)
		default:
			changed = append(changed, p)
		}
	}
	return changed, skipped, size, nil
}

// statusOut is the status's output, with or without the untracked cache.
func (c *Checkpoints) statusOut(ctx context.Context, env []string, cache bool) ([]byte, error) {
	return c.repo.GitSized(ctx, env, c.writing("-c", "core.untrackedCache="+strconv.FormatBool(cache), "-c", "status.showUntrackedFiles=all",
		"status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")...)
}

// staleRepoListed reports whether a status lists an untracked directory
// that is no nested repository (any more): with every untracked file
// listed, git lists a directory only for a repository inside the tree.
func (c *Checkpoints) staleRepoListed(out []byte) bool {
	for _, rec := range bytes.Split(out, []byte{0}) {
		if p, ok := strings.CutPrefix(string(rec), "? "); ok && strings.HasSuffix(p, "/") && !c.repo.isNestedRepo(p) {
			return true
		}
	}
	return false
}
