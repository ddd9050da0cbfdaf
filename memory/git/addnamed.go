package git

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// A checkpoint whose paths the tools named, and which cannot be built
// from the latest tree (treewrite.go), takes them into ralph's index.
// git add with the paths as pathspecs matched every one against every
// entry of the index, so its cost was the paths times the index: 0.47 s
// for 1,000 paths in an index of 20,000 files, 4.7 s for 10,000. What add
// adds beyond a plain update-index is its refusal of ignored files; so the
// ignored ones are found first, by one check-ignore that reads no index
// (a check against the index matched each path against it again), those
// the index tracks are kept (git add takes a tracked file whatever the
// ignore rules say), and update-index takes the rest, new, changed and
// removed alike. git add stays the fallback for a path update-index
// refuses (a directory, say).

// manyIgnored is the most ignored paths whose tracking is asked of git by
// name; past it, the whole index is listed once.
const manyIgnored = 64

// addNamed is add for the paths the tools named: the ignored ones that
// ralph's index does not track left out, the others brought up to the
// work tree by update-index, in a time that grows with the paths, not
// with the index.
func (c *Checkpoints) addNamed(ctx context.Context, env []string, paths []string, size int64, beside func()) error {
	var plain []string
	for _, p := range paths {
		if !c.repo.isNestedRepo(p) && !strings.HasSuffix(p, "/") {
			plain = append(plain, p)
		}
	}
	if len(plain) != len(paths) {
		// A nested repository goes add's way, which records it without
		// looking inside (add.go).
		return c.add(ctx, env, paths, size, beside)
	}
	ignored, err := c.untrackedIgnored(ctx, env, plain)
	if err != nil {
		return c.add(ctx, env, paths, size, beside)
	}
	keep := slices.DeleteFunc(slices.Clone(plain), func(p string) bool { return ignored[p] })
	if len(keep) == 0 {
		if beside != nil {
			beside()
		}
		return nil
	}
	started := false
	err = c.update(ctx, env, keep, size, func() {
		started = true
		if beside != nil {
			beside()
		}
	})
	if err == nil {
		return nil
	}
	// update-index refused a path and wrote nothing: add takes them, as
	// before (beside has run once already when git started).
	if started {
		beside = nil
	}
	return c.add(ctx, env, paths, size, beside)
}

// untrackedIgnored are the paths git ignores and ralph's index (env's)
// does not track: those git add -A refuses.
func (c *Checkpoints) untrackedIgnored(ctx context.Context, env []string, paths []string) (map[string]bool, error) {
	// check-ignore takes no pathspec magic, and a person's
	// GIT_LITERAL_PATHSPECS asks for it; it matches each path as a name
	// whatever characters it holds.
	plain := append(slices.Clip(env), "GIT_LITERAL_PATHSPECS=0")
	out, err := runCmd(ctx, scaled(0, len(paths)), false, c.repo.Top, plain, nulList(paths), "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil && exitCode(err) != 1 { // 1: none is ignored
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	ignored := map[string]bool{}
	var named []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			ignored[p] = true
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	// Which of them the index tracks: by name when they are few (each
	// pathspec is matched against the whole index), else the whole
	// index listed once.
	args := []string{"ls-files", "-z", "--cached"}
	if len(named) <= manyIgnored {
		args = append(args, "--")
		for _, p := range named {
			args = append(args, ":(top,literal)"+p)
		}
	}
	tracked, err := runCmd(ctx, scaled(0, len(paths)), false, c.repo.Top, append(slices.Clip(env), "GIT_LITERAL_PATHSPECS=0"), nil, args...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	// A named directory that holds tracked files is add's to take, not
	// left out: update-index refuses it, and add follows.
	for p := range bytes.SplitSeq(tracked, []byte{0}) {
		for t := string(p); t != "." && t != "" && len(ignored) > 0; t = path.Dir(t) {
			delete(ignored, t)
		}
	}
	return ignored, nil
}
