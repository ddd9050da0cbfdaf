package git

import (
	"context"
	"fmt"
	"strings"
)

// statusLines bounds how much of `git status --short` the system prompt
// carries: a tree with thousands of changes would otherwise fill the
// model's context with file names.
const statusLines = 50

// recentCommits is how many commit subjects the system prompt carries.
const recentCommits = 10

// Context describes where the repository stands, for the system prompt:
// the branch and how it compares with its upstream, the changes in the
// work tree (bounded), and the latest commit subjects. It runs in dir,
// any directory of the work tree, so that it needs nothing Open finds
// and can run beside it: this is on the way to the first request, and
// its two git commands run side by side too. clean reports a work tree
// and index that match HEAD, with no untracked files. exclude are paths
// (relative to dir) left out of the status: ralph's own state directory.
func Context(ctx context.Context, dir string, exclude ...string) (text string, clean bool, err error) {
	// Outside any work tree both commands can only fail; starting them
	// cost milliseconds of every one-shot in a scratch directory.
	if !mayBeInWorkTree(dir) {
		return "", false, ErrNoRepo
	}
	// The whole work tree (":/"), whatever dir is, with paths relative to
	// its top. The status, the longer of the two, starts first.
	args := []string{"-c", "status.relativePaths=false", "status", "--short", "--branch", "--untracked-files=normal", "--ignore-submodules=dirty", "--", ":/"}
	for _, x := range exclude {
		args = append(args, ":(exclude,literal)"+x)
	}
	st, err := start(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	if err != nil {
		return "", false, err
	}
	var log []byte
	if lg, err := start(ctx, dir, nil, "log", fmt.Sprintf("-%d", recentCommits), "--format=%s"); err == nil {
		// A repository without commits has no log; that is not an error.
		log, _ = lg.finish(nil)
	}
	status, err := st.finish(nil)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(string(status), "\n"), "\n")
	branch := strings.TrimPrefix(lines[0], "## ")
	fmt.Fprintf(&b, "Branch: %s\n", branch)
	changes := lines[1:]
	switch {
	case len(changes) == 0 || (len(changes) == 1 && changes[0] == ""):
		clean = true
		b.WriteString("Work tree: clean\n")
	default:
		fmt.Fprintf(&b, "Work tree changes (git status --short, %d):\n", len(changes))
		for i, l := range changes {
			if i == statusLines {
				fmt.Fprintf(&b, "… and %d more\n", len(changes)-statusLines)
				break
			}
			b.WriteString(l + "\n")
		}
	}
	if subjects := strings.TrimRight(string(log), "\n"); subjects != "" {
		b.WriteString("Recent commits (newest first):\n")
		for _, s := range strings.Split(subjects, "\n") {
			b.WriteString("- " + s + "\n")
		}
	}
	return b.String(), clean, nil
}
