package git

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
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
	// Index is the tree the person's index holds (what `git commit` would
	// commit), "" when it cannot be told (a merge in conflict).
	Index string `json:"index,omitempty"`
	// IndexSum is the hash the index file ended in when Index was found
	// (hex): an undo that finds the index ending in it still knows its
	// tree without writing one (KnowIndex).
	IndexSum string `json:"index_sum,omitempty"`
}

// maxBranches is the most branches recorded beside a checkpoint.
const maxBranches = 200

// ReadHeads reads HEAD and the local branches: from the repository's
// files where it can (see refsread.go), in one git process otherwise.
func (r *Repo) ReadHeads(ctx context.Context) (Heads, error) {
	var h Heads
	data, err := readAdmin(r.GitDir, "HEAD")
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
	var wg sync.WaitGroup
	wg.Go(func() { h.Index, h.IndexSum = r.indexTree(ctx) })
	lines, err := r.localBranches(ctx)
	wg.Wait()
	if err != nil {
		return h, err
	}
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

// localBranches lists the local branches as "name commit", by name. The
// name is the whole branch name, never git's shortened one (heads/x
// where a tag x exists), which git branch would not take back.
func (r *Repo) localBranches(ctx context.Context) ([]string, error) {
	if lines, ok := localBranches(r.common()); ok {
		return lines, nil
	}
	out, err := r.Git(ctx, nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ok := strings.CutPrefix(l, "refs/heads/"); ok {
			lines = append(lines, name)
		}
	}
	return lines, nil
}

// indexTree is the tree of the person's index, written from a copy of it:
// git write-tree on the index itself could write the index back (its
// cache of trees), and the person's index is never written by ralph
// unasked. "" when it cannot be told. sum is the hash the index ends in
// (hex), with the tree.
func (r *Repo) indexTree(ctx context.Context) (tree, sum string) {
	data, err := readAdmin(r.GitDir, "index")
	if err != nil || len(data) < 20 {
		return "", ""
	}
	// The index ends in the hash of all its bytes: an index that has not
	// changed since the last look has the tree found then.
	end := string(data[len(data)-20:])
	sum = hex.EncodeToString(data[len(data)-20:])
	r.indexMu.Lock()
	defer r.indexMu.Unlock()
	if end == r.indexSum {
		return r.indexSeen, sum
	}
	tmp, err := os.CreateTemp("", "ralph-heads-index-*")
	if err != nil {
		return "", ""
	}
	person := rootfs.Person()
	defer person.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err != nil || cerr != nil {
		return "", ""
	}
	if _, err := ownIndex(person, tmp.Name()); err != nil {
		return "", ""
	}
	out, err := r.Git(ctx, []string{"GIT_INDEX_FILE=" + tmp.Name()}, "write-tree")
	if err != nil {
		return "", ""
	}
	r.indexSum, r.indexSeen = end, strings.TrimSpace(string(out))
	return r.indexSeen, sum
}

// KnowIndex takes the index's tree from heads an earlier process read
// (its Index and IndexSum), so that ReadHeads of an index unchanged since
// writes no tree: an undo reads the heads once more, beside the ones the
// checkpoint it takes back recorded. What this process found itself is
// kept.
func (r *Repo) KnowIndex(h Heads) {
	sum, err := hex.DecodeString(h.IndexSum)
	if err != nil || len(sum) != 20 || h.Index == "" {
		return
	}
	r.indexMu.Lock()
	defer r.indexMu.Unlock()
	if r.indexSum == "" {
		r.indexSum, r.indexSeen = string(sum), h.Index
	}
}

// IndexIsHead notes that the person's index, as it is now, holds HEAD's
// tree (the work tree was found clean), so that the next look at an
// unchanged index needs no git process: its tree is named by HEAD's
// commit, which undo resolves when it compares (SameTree).
func (r *Repo) IndexIsHead() {
	data, err := readAdmin(r.GitDir, "index")
	if err != nil || len(data) < 20 || r.Head == "" {
		return
	}
	r.indexMu.Lock()
	defer r.indexMu.Unlock()
	r.indexSum, r.indexSeen = string(data[len(data)-20:]), r.Head
}

// SameTree reports whether two tree-ishes (trees or commits) name the same
// tree. One rev-parse reads both (an undo ran one each); a name git does
// not know fails it, and they are not the same.
func (r *Repo) SameTree(ctx context.Context, a, b string) bool {
	if a == b {
		return true
	}
	// --revs-only: a file planted under such a name is not echoed back
	// as if it were a tree.
	out, err := r.Git(ctx, nil, "rev-parse", "--revs-only", "--end-of-options", a+"^{tree}", b+"^{tree}")
	if err != nil {
		return false
	}
	trees := strings.Fields(string(out))
	return len(trees) == 2 && trees[0] == trees[1]
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
			Command: "git switch " + text.ShellWord(before.Branch),
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
	if before.Index != "" && now.Index != "" && before.Index != now.Index {
		// After a moved branch's reset --soft (above), which keeps the
		// index as the model left it.
		out = append(out, GitChange{
			What:    "the index (what is staged) changed: the model's git add, rm, reset or commit",
			Command: "git read-tree " + before.Index,
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
			out = append(out, GitChange{What: "branch " + name + " was created", Command: "git branch -D " + text.ShellWord(name)})
		case !has:
			out = append(out, GitChange{What: "branch " + name + " was deleted", Command: "git branch " + text.ShellWord(name) + " " + old})
		case old != cur && name != now.Branch:
			out = append(out, GitChange{What: fmt.Sprintf("branch %s moved from %s to %s", name, short(old), short(cur)), Command: "git branch -f " + text.ShellWord(name) + " " + old})
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

// ResetIndex puts the person's index back to tree (git read-tree): undo
// --git, for what the model staged.
func (r *Repo) ResetIndex(ctx context.Context, tree string) error {
	// git would write the new index through a link planted at its name.
	if err := asideIndex(r.GitDir); err != nil && !errors.Is(err, ErrIndexSetAside) {
		return err
	}
	if _, err := r.Git(ctx, nil, "read-tree", tree); err != nil {
		return fmt.Errorf("git read-tree %s: %w", short(tree), err)
	}
	return nil
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
