package git

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Diff returns the patch between two checkpoints (or any commits), for the
// given paths relative to the top, or all when none are given. It is
// never coloured: the files hold untrusted text, and the caller colours
// what it has cleaned.
func (r *Repo) Diff(ctx context.Context, from, to string, paths ...string) ([]byte, error) {
	args := []string{"diff", "--no-renames", "--no-ext-diff", "--no-color", from, to, "--"}
	return r.GitSized(ctx, nil, append(args, literal(paths)...)...)
}

// Numstat counts the lines that paths (all when none) gained and lost
// between two commits.
func (r *Repo) Numstat(ctx context.Context, from, to string, paths []string) ([]FileChange, error) {
	args := []string{"diff", "--numstat", "-z", "--no-renames", from, to, "--"}
	out, err := r.GitSized(ctx, nil, append(args, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	return parseNumstat(out), nil
}

// Changed returns which of paths differ between two commits. The two
// trees are compared whole, in one process, and the answer filtered
// here: any number of paths costs one git command.
func (r *Repo) Changed(ctx context.Context, from, to string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := runCmd(ctx, scaled(0, len(paths)), false, r.Top, nil, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to)
	if err != nil {
		return nil, err
	}
	wanted := make(map[string]bool, len(paths))
	for _, p := range paths {
		wanted[p] = true
	}
	var changed []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 && wanted[string(p)] {
			changed = append(changed, string(p))
		}
	}
	return changed, nil
}

// Restore puts paths (relative to the top) back as they are in commit:
// with their content and mode when commit has them, removed when it does
// not (see writeBack). Only the work tree changes; no index is touched,
// the person's or ralph's, so a killed restore leaves no lock behind.
func (r *Repo) Restore(ctx context.Context, commit string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	return r.writeBack(ctx, commit, paths)
}

// literal makes paths literal pathspecs: a file named "*.go" means that
// file, not a pattern.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

// Prune deletes a session's checkpoint refs, and the shared part of its
// index file (index; the caller removes the file itself); the commits
// become unreachable and git's own garbage collection removes them in
// time.
func (r *Repo) Prune(ctx context.Context, session, index string) error {
	if err := r.forgetIndex(index); err != nil {
		return err
	}
	// git deletes a ref through the directories of its path: none may be
	// a link out of the repository (see refguard.go).
	if err := guardRepo(r.common(), session, false); err != nil {
		return err
	}
	out, err := r.Git(ctx, nil, "for-each-ref", "--format=%(refname)", RefPrefix+session+"/")
	if err != nil {
		return err
	}
	var stdin bytes.Buffer
	for _, ref := range strings.Fields(string(out)) {
		fmt.Fprintf(&stdin, "delete %s\n", ref)
	}
	if stdin.Len() == 0 {
		return nil
	}
	_, err = run(ctx, r.Top, nil, stdin.Bytes(), "update-ref", "--stdin")
	return err
}
