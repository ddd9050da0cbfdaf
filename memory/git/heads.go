package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Heads is the person's git state that a checkpoint cannot hold and a
// model's own git commands may change: where HEAD points and the local
// branches. It is recorded beside each checkpoint, so that undo can say
// what the model's commits, switches and branches did, and how to put
// each back.
type Heads struct {
	// Head is HEAD's commit, Branch the branch HEAD is on ("" detached).
	Head   string `json:"head,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Branches are the local branches, "name commit" each; left out (nil)
	// past maxBranches, where comparing them would cost more than it
	// tells.
	Branches []string `json:"branches,omitempty"`
}

// maxBranches is the most branches recorded beside a checkpoint.
const maxBranches = 200

// ReadHeads reads HEAD and the local branches, in one git process.
func (r *Repo) ReadHeads(ctx context.Context) (Heads, error) {
	var h Heads
	data, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil {
		return h, err
	}
	head := strings.TrimSpace(string(data))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if symbolic {
		h.Branch = strings.TrimPrefix(ref, "refs/heads/")
	} else {
		h.Head = head
	}
	out, err := r.Git(ctx, nil, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
	if err != nil {
		return h, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		name, commit, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		if symbolic && name == h.Branch {
			h.Head = commit
		}
		if len(lines) <= maxBranches {
			h.Branches = append(h.Branches, l)
		}
	}
	return h, nil
}

// GitChange is one change to the person's git state that undo does not
// make itself, and the command that puts it back.
type GitChange struct {
	What    string `json:"what"`
	Command string `json:"command"`
}

// HeadChanges are what changed between two records of the person's git
// state, each with the git command that puts it back.
func HeadChanges(before, now Heads) []GitChange {
	var out []GitChange
	switch {
	case before.Head == "" && before.Branch == "":
		return nil // not recorded
	case before.Branch != now.Branch && before.Branch != "":
		out = append(out, GitChange{
			What:    fmt.Sprintf("HEAD was on branch %s and is on %s now", before.Branch, orDetached(now.Branch)),
			Command: "git switch " + before.Branch,
		})
	case before.Branch == "" && now.Head != before.Head:
		out = append(out, GitChange{
			What:    fmt.Sprintf("HEAD was at %s (detached) and is at %s now", short(before.Head), short(now.Head)),
			Command: "git switch --detach " + before.Head,
		})
	case before.Head != now.Head && before.Head != "":
		out = append(out, GitChange{
			What:    fmt.Sprintf("branch %s moved from %s to %s (a commit, reset or merge of the model's)", now.Branch, short(before.Head), short(now.Head)),
			Command: "git reset --soft " + before.Head,
		})
	}
	if before.Branches == nil || now.Branches == nil {
		return out
	}
	was := map[string]string{}
	for _, b := range before.Branches {
		name, commit, _ := strings.Cut(b, " ")
		was[name] = commit
	}
	is := map[string]string{}
	for _, b := range now.Branches {
		name, commit, _ := strings.Cut(b, " ")
		is[name] = commit
	}
	var names []string
	for name := range is {
		names = append(names, name)
	}
	for name := range was {
		if _, ok := is[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		old, had := was[name]
		cur, has := is[name]
		switch {
		case !had:
			out = append(out, GitChange{What: "branch " + name + " was created", Command: "git branch -D " + name})
		case !has:
			out = append(out, GitChange{What: "branch " + name + " was deleted", Command: "git branch " + name + " " + old})
		case old != cur && name != now.Branch:
			out = append(out, GitChange{What: fmt.Sprintf("branch %s moved from %s to %s", name, short(old), short(cur)), Command: "git branch -f " + name + " " + old})
		}
	}
	return out
}

func orDetached(branch string) string {
	if branch == "" {
		return "no branch (detached)"
	}
	return branch
}

// ResetHead moves the current branch back to commit, keeping the work
// tree and the index (git reset --soft): undo --git, for a commit the
// model made.
func (r *Repo) ResetHead(ctx context.Context, commit string) error {
	if _, err := r.Git(ctx, nil, "reset", "--soft", "-q", commit); err != nil {
		return fmt.Errorf("git reset --soft %s: %w", short(commit), err)
	}
	return nil
}
