package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gitInit makes a repository at dir with git itself, and sets its keys.
func gitInit(t testing.TB, dir string, keys ...string) {
	t.Helper()
	cmds := [][]string{{"init", "-q", dir}}
	for i := 0; i+1 < len(keys); i += 2 {
		cmds = append(cmds, []string{"-C", dir, "config", keys[i], keys[i+1]})
	}
	for _, args := range cmds {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func undoneMap(us []Undone) map[string]string {
	got := map[string]string{}
	for _, u := range us {
		got[u.File] = strings.Join(u.Keys, ",")
	}
	return got
}

// TestNestedGuardLeavesThePersonsOwnAndUndoesTheCommands: what the person
// had is kept, what a command added is taken back, as git reads it.
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
	gitInit(t, root)
	gitInit(t, filepath.Join(root, "vendor/lib"), "core.hooksPath", ".husky") // the person's
	personal := readText(t, filepath.Join(root, "vendor/lib/.git/config"))
	g := newNestedGuard(root)
	g.prime()
	gitInit(t, filepath.Join(root, "nest"), "core.fsmonitor", "evil")
	gitInit(t, filepath.Join(root, "sub"))
	os.MkdirAll(filepath.Join(root, ".git/modules"), 0o755)
	os.Rename(filepath.Join(root, "sub/.git"), filepath.Join(root, ".git/modules/sub"))
	os.WriteFile(filepath.Join(root, "sub/.git"), []byte("gitdir: ../.git/modules/sub\n"), 0o644)
	gitInit(t, filepath.Join(root, "sub"), "diff.x.textconv", "evil")
	gitInit(t, filepath.Join(root, "elsewhere"), "core.sshCommand", "evil")
	write("linked/.git", "gitdir: ../elsewhere/.git\n")
	gitInit(t, filepath.Join(root, "vendor/lib"), "core.pager", "evil")
	got := undoneMap(g.check())
	want := map[string]string{
		"nest/.git/config":        "core.fsmonitor",
		".git/modules/sub/config": "diff.x.textconv",
		"elsewhere/.git/config":   "core.sshcommand",
		"vendor/lib/.git/config":  "core.pager",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: undone %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if b := readText(t, filepath.Join(root, "vendor/lib/.git/config")); b != personal {
		t.Errorf("the person's file was not put back as it was:\n%s", b)
	}
	if b := readText(t, filepath.Join(root, "nest/.git/config")); strings.Contains(b, "fsmonitor") || !strings.Contains(b, "repositoryformatversion") {
		t.Errorf("the new file kept a program key, or lost another:\n%s", b)
	}
	if again := g.check(); len(again) != 0 {
		t.Errorf("a second check undid %v", again)
	}
}

// TestNestedGuardReadsAsGitDoes: the ways around a parser of ours that
// git still reads — a byte-order mark, a line longer than a buffer, a
// .git link, a .git file or a commondir leading outside the project, an
// include of a work-tree file — are all seen and taken back.
func TestNestedGuardReadsAsGitDoes(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	gitInit(t, root, "include.path", "../shared.cfg") // the person's include
	if err := os.WriteFile(filepath.Join(root, "shared.cfg"), []byte("[user]\n\tname = me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newNestedGuard(root)
	g.prime()
	// A byte-order mark, and a line of 5 MiB before the key.
	gitInit(t, filepath.Join(root, "bom"))
	cfg := filepath.Join(root, "bom/.git/config")
	b := readText(t, cfg)
	long := "[x]\n\ty = " + strings.Repeat("a", 5<<20) + "\n[core]\n\tfsmonitor = evil\n"
	if err := os.WriteFile(cfg, []byte("\ufeff"+b+long), 0o644); err != nil {
		t.Fatal(err)
	}
	// A .git link and a .git file to repositories outside.
	gitInit(t, filepath.Join(outside, "a"), "core.fsmonitor", "evil")
	gitInit(t, filepath.Join(outside, "b"), "core.fsmonitor", "evil")
	os.MkdirAll(filepath.Join(root, "ln"), 0o755)
	os.MkdirAll(filepath.Join(root, "gf"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "a/.git"), filepath.Join(root, "ln/.git")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "gf/.git"), []byte("gitdir: "+filepath.Join(outside, "b/.git")+"\n"), 0o644)
	// A commondir elsewhere.
	gitInit(t, filepath.Join(root, "cd"))
	os.WriteFile(filepath.Join(root, "cd/.git/commondir"), []byte(filepath.Join(outside, "a/.git")+"\n"), 0o644)
	// The include of a work-tree file gains a filter.
	os.WriteFile(filepath.Join(root, "shared.cfg"), []byte("[user]\n\tname = me\n[filter \"x\"]\n\tclean = evil\n"), 0o644)

	got := undoneMap(g.check())
	if got["bom/.git/config"] != "core.fsmonitor" || got["shared.cfg"] != "filter.x.clean" {
		t.Errorf("undone: %v", got)
	}
	for _, p := range []string{"ln/.git", "gf/.git", "cd/.git/commondir"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s still leads outside", p)
		}
		if _, err := os.Lstat(filepath.Join(root, p+".ralph-untrusted")); err != nil {
			t.Errorf("%s was not kept aside: %v (undone: %v)", p, err, got)
		}
	}
	if b := readText(t, cfg); strings.Contains(b, "fsmonitor") || !strings.HasPrefix(b, "\ufeff") || !strings.Contains(b, strings.Repeat("a", 5<<20)) {
		t.Errorf("bom/.git/config: fsmonitor kept or other content lost (%d bytes)", len(b))
	}
	if b := readText(t, filepath.Join(root, "shared.cfg")); b != "[user]\n\tname = me\n" {
		t.Errorf("shared.cfg was not put back:\n%s", b)
	}
	if again := g.check(); len(again) != 0 {
		t.Errorf("a second check undid %v", again)
	}
}

// TestNestedGuardKeepsAMovedRepositorysKeys: the person's core.editor in
// a nested repository survives its .git being moved into a subdirectory.
func TestNestedGuardKeepsAMovedRepositorysKeys(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	gitInit(t, filepath.Join(root, "lib"), "core.editor", "vim")
	g := newNestedGuard(root)
	g.prime()
	os.MkdirAll(filepath.Join(root, "lib/sub"), 0o755)
	if err := os.Rename(filepath.Join(root, "lib/.git"), filepath.Join(root, "lib/sub/.git")); err != nil {
		t.Fatal(err)
	}
	if u := g.check(); len(u) != 0 {
		t.Errorf("took back %v", u)
	}
	if b := readText(t, filepath.Join(root, "lib/sub/.git/config")); !strings.Contains(b, "editor = vim") {
		t.Errorf("the person's core.editor was lost:\n%s", b)
	}
}

// TestNestedGuardTopLevelRepositoryMadeByACommand: a project that was no
// repository gets one from a command; its program keys are taken back.
func TestNestedGuardTopLevelRepositoryMadeByACommand(t *testing.T) {
	root := t.TempDir()
	g := newNestedGuard(root)
	g.prime()
	gitInit(t, root, "core.fsmonitor", "evil", "filter.x.clean", "evil", "diff.x.textconv", "evil")
	if got := undoneMap(g.check()); got[".git/config"] != "core.fsmonitor,diff.x.textconv,filter.x.clean" {
		t.Errorf("undone: %v", got)
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

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNestedGuardNeverWritesThroughALink: an included file the command
// replaced with a link to a file outside the project is put back as a
// file; the file outside is not written.
func TestNestedGuardNeverWritesThroughALink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	gitInit(t, root, "include.path", "../shared.cfg")
	shared := filepath.Join(root, "shared.cfg")
	os.WriteFile(shared, []byte("[user]\n\tname = me\n"), 0o644)
	g := newNestedGuard(root)
	g.prime()
	evil := filepath.Join(outside, "evil.cfg")
	os.WriteFile(evil, []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
	os.Remove(shared)
	if err := os.Symlink(evil, shared); err != nil {
		t.Fatal(err)
	}
	if got := undoneMap(g.check()); got["shared.cfg"] != "core.fsmonitor" {
		t.Errorf("undone: %v", got)
	}
	if fi, err := os.Lstat(shared); err != nil || !fi.Mode().IsRegular() || readText(t, shared) != "[user]\n\tname = me\n" {
		t.Errorf("shared.cfg was not put back as a file: %v", err)
	}
	if readText(t, evil) != "[core]\n\tfsmonitor = evil\n" {
		t.Error("the file outside was written through the link")
	}
}

// TestNestedGuardTakesBackProgramTransports: an ext:: remote, an
// insteadOf that rewrites to one and a protocol policy that allows it,
// added by a command, are taken back; an ordinary remote stays, and so
// does a policy that refuses.
func TestNestedGuardTakesBackProgramTransports(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	g := newNestedGuard(root)
	g.prime()
	nest := filepath.Join(root, "nest")
	gitInit(t, nest, "remote.origin.url", "ext::sh -c touch% /tmp/x", "remote.mirror.url", "https://example.com/r.git",
		"remote.mirror.pushurl", " FD::3 ", "protocol.ext.allow", "always", "protocol.allow", "user", "protocol.file.allow", "never",
		"url.ext::sh -c touch% /tmp/x.insteadOf", "https://", "url.https://mirror.example/.insteadOf", "https://example.com/")
	got := undoneMap(g.check())
	if want := "protocol.allow,protocol.ext.allow,remote.mirror.pushurl,remote.origin.url,url.ext::sh -c touch% /tmp/x.insteadof"; got["nest/.git/config"] != want {
		t.Errorf("undone %q, want %q", got["nest/.git/config"], want)
	}
	b := readText(t, filepath.Join(nest, ".git/config"))
	for _, gone := range []string{"ext::", "FD::", "always", "user"} {
		if strings.Contains(b, gone) {
			t.Errorf("the config kept %q:\n%s", gone, b)
		}
	}
	for _, kept := range []string{"https://example.com/r.git", "[protocol \"file\"]", "mirror.example"} {
		if !strings.Contains(b, kept) {
			t.Errorf("the config lost %q:\n%s", kept, b)
		}
	}
}

// TestNestedGuardSetsAsideALinkOutOfTheProject: a .git LINK a command
// makes to another repository of the person's (ln -s ~/victim/.git
// sub2/.git) is set aside like a .git file naming it, told in the same
// one sentence, and that repository is not marked as the model's.
func TestNestedGuardSetsAsideALinkOutOfTheProject(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	root := t.TempDir()
	gitInit(t, root)
	victim := filepath.Join(t.TempDir(), "victim")
	gitInit(t, victim)
	g := newNestedGuard(root)
	g.prime()
	if err := os.MkdirAll(filepath.Join(root, "sub2"), 0o755); err != nil {
		t.Fatal(err)
	}
	ptr := filepath.Join(root, "sub2", ".git")
	if err := os.Symlink(filepath.Join(victim, ".git"), ptr); err != nil {
		t.Fatal(err)
	}
	u := g.check()
	if len(u) != 1 || !strings.Contains(u[0].Note, "sub2/.git") || !strings.Contains(u[0].Note, "outside the project") {
		t.Fatalf("told %+v, want one sentence on sub2/.git leading outside", u)
	}
	if _, err := os.Lstat(ptr); !os.IsNotExist(err) {
		t.Errorf("sub2/.git is still there: %v", err)
	}
	if fi, err := os.Lstat(ptr + ".ralph-untrusted"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("sub2/.git was not kept aside as the link it was: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, ".git", "config")); err != nil {
		t.Errorf("the victim's repository was touched: %v", err)
	}
	if marks, _ := filepath.Glob(filepath.Join(cfg, "ralph", "git-trust", "model-*.json")); len(marks) != 0 {
		t.Errorf("a repository outside the project was marked as the model's: %v", marks)
	}
	// A link to a git directory inside the project stays.
	gitInit(t, filepath.Join(root, "nest"))
	if err := os.MkdirAll(filepath.Join(root, "sub3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nest", ".git"), filepath.Join(root, "sub3", ".git")); err != nil {
		t.Fatal(err)
	}
	_ = g.check()
	if _, err := os.Lstat(filepath.Join(root, "sub3", ".git")); err != nil {
		t.Errorf("a .git link inside the project was set aside: %v", err)
	}
}

// TestNestedGuardSetsAsideAPointerOutOfTheProject: a .git file a command
// writes that names another repository of the person's (sub/.git =
// gitdir: ~/victim/.git) is renamed aside and told in one sentence, and
// that repository is not marked as the model's: ralph's commits there
// keep running its hooks.
func TestNestedGuardSetsAsideAPointerOutOfTheProject(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	root := t.TempDir()
	gitInit(t, root)
	victim := filepath.Join(t.TempDir(), "victim")
	gitInit(t, victim)
	g := newNestedGuard(root)
	g.prime()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ptr := filepath.Join(root, "sub", ".git")
	if err := os.WriteFile(ptr, []byte("gitdir: "+filepath.Join(victim, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := g.check()
	if len(u) != 1 || !strings.Contains(u[0].Note, "sub/.git") || !strings.Contains(u[0].Note, "outside the project") {
		t.Fatalf("told %+v, want one sentence on sub/.git leading outside", u)
	}
	if _, err := os.Lstat(ptr); !os.IsNotExist(err) {
		t.Errorf("sub/.git is still there: %v", err)
	}
	if _, err := os.Lstat(ptr + ".ralph-untrusted"); err != nil {
		t.Errorf("sub/.git was not kept aside: %v", err)
	}
	marks, _ := filepath.Glob(filepath.Join(cfg, "ralph", "git-trust", "model-*.json"))
	if len(marks) != 0 {
		t.Errorf("a repository outside the project was marked as the model's: %v", marks)
	}
	// A repository a command makes inside the project is still marked.
	gitInit(t, filepath.Join(root, "nest"))
	_ = g.check()
	if marks, _ := filepath.Glob(filepath.Join(cfg, "ralph", "git-trust", "model-*.json")); len(marks) != 1 {
		t.Errorf("the command's own repository in the project: marks %v, want one", marks)
	}
}
