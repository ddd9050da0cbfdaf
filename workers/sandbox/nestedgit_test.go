package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestProgramKeysOfAGitConfig(t *testing.T) {
	cfg := `[core]
	repositoryformatversion = 0
	FSMonitor = "run me"
[filter "lfs"]
	clean = git-lfs clean -- %f
	required = true
[alias]
	st = !sh -c 'evil'
[core] pager = less \
   -R
[remote "origin"]
	url = https://example.com/x
	uploadpack = evil
[user]
	name = person
`
	got := addedKeys([]byte(cfg), nil)
	want := []string{"core.fsmonitor", "filter.lfs.clean", "alias.st", "core.pager", "remote.origin.uploadpack"}
	if !slices.Equal(got, want) {
		t.Fatalf("addedKeys = %q, want %q", got, want)
	}
	clean := string(withoutProgramKeys([]byte(cfg)))
	for _, gone := range []string{"run me", "git-lfs", "evil", "less", "-R"} {
		if strings.Contains(clean, gone) {
			t.Errorf("%q survived:\n%s", gone, clean)
		}
	}
	for _, kept := range []string{"repositoryformatversion", "required = true", "url = https://example.com/x", "name = person"} {
		if !strings.Contains(clean, kept) {
			t.Errorf("%q was lost:\n%s", kept, clean)
		}
	}
	// A key the file had already is not the command's doing; a new
	// value of it is.
	if got := addedKeys([]byte(cfg), []byte(cfg)); len(got) != 0 {
		t.Errorf("unchanged file: %q", got)
	}
	changed := strings.Replace(cfg, `"run me"`, `"run me too"`, 1)
	if got := addedKeys([]byte(changed), []byte(cfg)); !slices.Equal(got, []string{"core.fsmonitor"}) {
		t.Errorf("changed value: %q", got)
	}
}

func TestNestedGuardLeavesThePersonsOwnAndUndoesTheCommands(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".git/config", "[core]\n\tbare = false\n")
	write("vendor/lib/.git/config", "[core]\n\thooksPath = .husky\n") // the person's
	g := newNestedGuard(root)
	g.prime()
	write("nest/.git/config", "[core]\n\tfsmonitor = evil\n\tbare = false\n")
	write(".git/modules/sub/config", "[core]\n\tworktree = ../../../sub\n[diff \"x\"]\n\ttextconv = evil\n")
	write("linked/.git", "gitdir: ../elsewhere\n")
	write("elsewhere/config", "[core]\n\tsshCommand = evil\n")
	write("vendor/lib/.git/config", "[core]\n\thooksPath = .husky\n\tpager = evil\n")
	got := map[string]string{}
	for _, u := range g.check() {
		got[u.File] = strings.Join(u.Keys, ",")
	}
	want := map[string]string{
		"nest/.git/config":        "core.fsmonitor",
		".git/modules/sub/config": "core.worktree,diff.x.textconv",
		"elsewhere/config":        "core.sshcommand",
		"vendor/lib/.git/config":  "core.pager",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: undone %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "vendor/lib/.git/config")); string(b) != "[core]\n\thooksPath = .husky\n" {
		t.Errorf("the person's file was not put back as it was:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "nest/.git/config")); string(b) != "[core]\n\tbare = false\n" {
		t.Errorf("the new file kept a program key:\n%s", b)
	}
	if again := g.check(); len(again) != 0 {
		t.Errorf("a second check undid %v", again)
	}
}

// BenchmarkNestedGuardCheck10k is the look for nested repositories'
// configuration after every command, in a project of 10,000 files in
// 1,000 directories: the walk reads directories, not files.
func BenchmarkNestedGuardCheck10k(b *testing.B) {
	root := b.TempDir()
	for d := range 1000 {
		dir := filepath.Join(root, "pkg", strconv.Itoa(d/100), strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 10 {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(f)+".go"), []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	g := newNestedGuard(root)
	g.prime()
	for b.Loop() {
		if u := g.check(); len(u) != 0 {
			b.Fatal(u)
		}
	}
}
