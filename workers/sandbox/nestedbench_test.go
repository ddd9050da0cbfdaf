package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// project10k is a project of 10,000 files in 1,000 directories with 20
// nested repositories, each with a commit, as a monorepo with vendored
// repositories is.
func project10k(b *testing.B) string {
	root := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
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
	for n := range 20 {
		dir := filepath.Join(root, "vendor", strconv.Itoa(n))
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v\n%s", err, out)
		}
	}
	// A project is not made the moment before a command: change times a
	// second old are trusted (see settled).
	time.Sleep(1100 * time.Millisecond)
	return root
}

// BenchmarkNestedGuard10kWith20Repos is the guard's look after a command
// that changed no repository: stat calls, no git.
func BenchmarkNestedGuard10kWith20Repos(b *testing.B) {
	root := project10k(b)
	g := newNestedGuard(root)
	g.prime()
	g.check() // past the first seconds, when change times are too recent to trust
	for b.Loop() {
		if u := g.check(); len(u) != 0 {
			b.Fatal(u)
		}
	}
}

// BenchmarkNestedGuard10kWith20ReposOneChanged is the look after a
// command that rewrote one nested repository's configuration (no program
// key): git reads that repository again.
func BenchmarkNestedGuard10kWith20ReposOneChanged(b *testing.B) {
	root := project10k(b)
	g := newNestedGuard(root)
	g.prime()
	cfg := filepath.Join(root, "vendor", "7", ".git", "config")
	data, err := os.ReadFile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if err := os.WriteFile(cfg, append(data, []byte("[x]\n\ty = "+strconv.Itoa(i)+"\n")...), 0o644); err != nil {
			b.Fatal(err)
		}
		if u := g.check(); len(u) != 0 {
			b.Fatal(u)
		}
	}
}

// BenchmarkNestedGuardTopOf10kFilesOneAdded is the look after a step that
// added a file at the top of a project of 10,000 files there, as each
// task of a long task loop does (issue 94): the top directory changed,
// and no directory in it is new.
func BenchmarkNestedGuardTopOf10kFilesOneAdded(b *testing.B) {
	root := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	for i := range 10_000 {
		if err := os.WriteFile(filepath.Join(root, "t"+strconv.Itoa(i)+".txt"), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	g := newNestedGuard(root)
	g.prime()
	i := 0
	for b.Loop() {
		i++
		if err := os.WriteFile(filepath.Join(root, "new"+strconv.Itoa(i)+".txt"), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if u := g.check(); len(u) != 0 {
			b.Fatal(u)
		}
	}
}
