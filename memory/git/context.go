package git

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// statusLines bounds how much of `git status --short` the system prompt
// carries: a tree with thousands of changes would otherwise fill the
// model's context with file names.
const statusLines = 50

// recentCommits is how many commit subjects the system prompt carries.
const recentCommits = 10

// Context describes where the repository stands, for the system prompt:
// the branch and how it compares with its upstream, the changes in the
// work tree (bounded), and the latest commit subjects. The two git
// commands run concurrently: this is on the way to the first request.
// clean reports a work tree and index that match HEAD, with no untracked
// files. exclude are paths (relative to the top) left out of the status:
// ralph's own state directory.
func (r *Repo) Context(ctx context.Context, exclude ...string) (text string, clean bool, err error) {
	var status, log []byte
	var statusErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		args := []string{"status", "--short", "--branch", "--untracked-files=normal", "--", "."}
		for _, x := range exclude {
			args = append(args, ":(exclude,literal)"+x)
		}
		status, statusErr = r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	})
	wg.Go(func() {
		// A repository without commits has no log; that is not an error.
		log, _ = r.Git(ctx, nil, "log", fmt.Sprintf("-%d", recentCommits), "--format=%s")
	})
	wg.Wait()
	if statusErr != nil {
		return "", false, statusErr
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
