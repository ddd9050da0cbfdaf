package git

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// ReviewBase is what `ralph review` compares the work tree with when no
// range is given: where the current branch left the default branch (main
// or master, or origin's HEAD), or HEAD itself on the default branch.
func (r *Repo) ReviewBase(ctx context.Context) (string, error) {
	branch, _ := r.Branch(ctx)
	var defaults []string
	if out, err := r.Git(ctx, nil, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"); err == nil {
		defaults = append(defaults, strings.TrimSpace(string(out)))
	}
	defaults = append(defaults, "main", "master")
	for _, d := range defaults {
		if d == "" || d == branch || r.Rev(ctx, d) == "" {
			continue
		}
		out, err := r.Git(ctx, nil, "merge-base", "HEAD", d)
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	if r.HeadNow(ctx) == "" {
		return "", fmt.Errorf("the repository has no commit to compare with")
	}
	return "HEAD", nil
}

// ReviewDiff is the patch a review reads: of a range ("main..feature",
// "HEAD~3") as git diff gives it, or, for a single commit, from it to the
// work tree, with the files git does not track yet (and does not ignore)
// as new files. Nothing is written: no index, no object.
func (r *Repo) ReviewDiff(ctx context.Context, rng string) (string, error) {
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-renames", rng, "--"}
	out, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	if err != nil {
		return "", err
	}
	if strings.Contains(rng, "..") {
		return string(out), nil
	}
	var b bytes.Buffer
	b.Write(out)
	untracked, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return "", err
	}
	for _, p := range bytes.Split(untracked, []byte{0}) {
		if len(p) == 0 || bytes.HasPrefix(p, []byte(".ralph/")) {
			continue
		}
		// --no-index exits 1 when the files differ, as they always do
		// here; its output is the patch all the same.
		d, _ := r.Git(ctx, nil, "diff", "--no-color", "--no-ext-diff", "--no-index", "--", "/dev/null", string(p))
		b.Write(d)
	}
	return b.String(), nil
}
