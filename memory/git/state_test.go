package git

import (
	"context"
	"path/filepath"
	"testing"
)

// WorkState changes with every change git can see — a new file, another
// write to a file already modified, a commit — and with nothing else: not
// with ralph's excluded state, not with ignored files. It writes nothing
// of the person's.
func TestWorkStateSeesEveryChange(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, ".gitignore"), "build/\n")
	r := open(t, dir)
	ctx := context.Background()
	state := func() string {
		t.Helper()
		s, err := r.WorkState(ctx, ".ralph", "RALPH_TASKS.md")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	person := personState(t, dir)
	s0 := state()
	if state() != s0 {
		t.Fatal("the state changed while nothing did")
	}
	write(t, filepath.Join(dir, ".ralph", "session.json"), "{}")
	write(t, filepath.Join(dir, "RALPH_TASKS.md"), "- [~] a\n")
	write(t, filepath.Join(dir, "build", "out.o"), "obj")
	if state() != s0 {
		t.Fatal("excluded or ignored files changed the state")
	}
	if personState(t, dir) != person {
		t.Fatal("WorkState touched the person's index or refs")
	}
	steps := []struct {
		what string
		do   func()
	}{
		{"a new file", func() { write(t, filepath.Join(dir, "new.txt"), "x\n") }},
		{"a change to a tracked file", func() { write(t, filepath.Join(dir, "b.txt"), "one\n") }},
		{"another write to the modified file", func() { write(t, filepath.Join(dir, "b.txt"), "one\nthree\n") }},
		{"a commit of everything", func() { sh(t, dir, "git add -A . ':!RALPH_TASKS.md' && git commit -qm second") }},
	}
	prev := s0
	for _, st := range steps {
		st.do()
		now := state()
		if now == prev {
			t.Fatalf("%s left the state as it was", st.what)
		}
		prev = now
	}
}

// TestHeadChangesQuoteTheModelsBranchNames: the command undo prints to put
// a branch back names it as one quoted shell word; pasted, the model's
// `$(…)` in a branch name ran as the person (the attack's REPRO-5).
func TestHeadChangesQuoteTheModelsBranchNames(t *testing.T) {
	t.Parallel()
	before := Heads{Head: "a", Branch: "main", Branches: []string{"main a"}}
	now := Heads{Head: "a", Branch: "main", Branches: []string{"main a", "$(touch${IFS}/tmp/PWN) b"}}
	changes := HeadChanges(before, now)
	if len(changes) != 1 || changes[0].Command != "git branch -D '$(touch${IFS}/tmp/PWN)'" {
		t.Fatalf("HeadChanges = %+v, want one quoted git branch -D", changes)
	}
}
