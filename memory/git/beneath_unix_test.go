//go:build unix

package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRestoreFollowsNoSymlinkedDirectory: a directory of a restored file
// swapped for a link out of the work tree (and one inside it) is replaced
// by the directory, and nothing is written or removed where the links
// pointed.
func TestRestoreFollowsNoSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "x.txt"), "outside\n")
	write(t, filepath.Join(outside, "gone.txt"), "keep me\n")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	sh(t, dir, "mkdir -p d e && printf 'mine\\n' > d/x.txt && printf 'e\\n' > e/y.txt")
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "rm -r d e && ln -s '"+outside+"' d && mkdir in && ln -s in e")
	if err := r.Restore(ctx, base.Commit, []string{"d/x.txt", "e/y.txt", "d/gone.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, outside, "cat x.txt gone.txt; ls"); got != "outside\nkeep me\ngone.txt\nx.txt\n" {
		t.Fatalf("the link's target changed: %q", got)
	}
	for _, d := range []string{"d", "e"} {
		if fi, err := os.Lstat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Fatalf("%s is not a directory again: %v", d, err)
		}
	}
	if got := sh(t, dir, "cat d/x.txt e/y.txt; ls in"); got != "mine\ne\n" {
		t.Fatalf("after restore: %q", got)
	}
}

// TestRestoreRefusesPathsOutsideTheWorkTree: a path a forged record names
// fails the restore before anything is written or removed.
func TestRestoreRefusesPathsOutsideTheWorkTree(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	victim := filepath.Join(filepath.Dir(dir), "victim.txt")
	write(t, victim, "the person's\n")
	t.Cleanup(func() { os.Remove(victim) })
	r := open(t, dir)
	for _, p := range []string{"../victim.txt", "/etc/passwd", "a/../../victim.txt", ".git/config", ".ralph/x", "./b.txt", ""} {
		err := r.Restore(context.Background(), "HEAD", []string{"b.txt", p})
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%q: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "the person's\n" {
		t.Fatal("the file outside changed")
	}
}

// TestCheckpointRefsFollowNoLink: refs/ralph and a session's directory
// swapped for links are made directories again, nothing lands where the
// links pointed, and a linked refs fails the checkpoint in one sentence.
func TestCheckpointRefsFollowNoLink(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	outside := t.TempDir()
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "rm -rf .git/refs/ralph && ln -s '"+outside+"' .git/refs/ralph && echo 1 > n.txt")
	if _, err := cps.Record(ctx, "1", "turn"); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "mkdir -p '"+outside+"/s' && ln -s '"+outside+"/s' .git/refs/ralph/s2 && echo 2 > n.txt")
	cps2 := NewCheckpoints(r, "s2", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if _, err := cps2.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, outside, "find . -mindepth 1"); got != "./s\n" {
		t.Fatalf("written through the links: %q", got)
	}
	if got := sh(t, dir, "git for-each-ref --format='%(refname)' refs/ralph/"); !strings.Contains(got, "refs/ralph/s/1") || !strings.Contains(got, "refs/ralph/s2/0") {
		t.Fatalf("refs: %q", got)
	}
	// A link at the very ref a checkpoint writes, or at its raw tree's, is
	// removed: git would take it for a symbolic ref and update the ref it
	// names.
	sh(t, dir, "ln -s ../../heads/main .git/refs/ralph/s/3 && ln -s '"+outside+"/raw' .git/refs/ralph/s/3.raw && echo 3 > n.txt")
	before := sh(t, dir, "git rev-parse refs/heads/main")
	if _, err := cps.Record(ctx, "3", "turn"); err != nil {
		t.Fatal(err)
	}
	if after := sh(t, dir, "git rev-parse refs/heads/main"); after != before {
		t.Fatalf("the checkpoint moved main through a link: %s, was %s", after, before)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git", "refs", "ralph", "s", "3")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("refs/ralph/s/3 is not a plain ref: %v %v", fi, err)
	}
	sh(t, dir, "mv .git/refs .git/refs.real && ln -s refs.real .git/refs && echo 4 > n.txt")
	if _, err := cps.Record(ctx, "4", "turn"); !errors.Is(err, ErrLinkedGitDir) || !strings.Contains(err.Error(), ".git/refs is not a plain directory") {
		t.Fatalf("a linked refs: %v", err)
	}
	// A fan-out directory of objects swapped for a link is refused too:
	// git's add would write the next blob through it. The guard lists the
	// objects directory by the types it gives (readDirTyped), not by an
	// lstat of each entry.
	sh(t, dir, "rm .git/refs && mv .git/refs.real .git/refs && mkdir -p '"+outside+"/zz' && ln -s '"+outside+"/zz' .git/objects/zz && echo 5 > n.txt")
	if _, err := cps.Record(ctx, "5", "turn"); !errors.Is(err, ErrLinkedGitDir) || !strings.Contains(err.Error(), "objects/zz") {
		t.Fatalf("a linked fan-out directory: %v", err)
	}
	sh(t, dir, "rm .git/objects/zz")
	if _, err := cps.Record(ctx, "5", "turn"); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreReplacesWhatStandsInTheWay: the restore's direct writes keep
// writeOne's guarantees. A link planted at a file's name is replaced, not
// written through; a link planted at the temporary file's name (a killed
// restore's, or a command's guess) is removed, not written through; a
// directory where the file was is replaced by the file; the executable
// bit comes back; and no temporary file is left.
func TestRestoreReplacesWhatStandsInTheWay(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "target.txt"), "outside\n")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	sh(t, dir, "mkdir -p d && printf 'a\\n' > d/a.txt && printf 'b\\n' > d/b.txt && printf 'c\\n' > d/c.txt && printf '#!/bin/sh\\n' > d/run.sh && chmod +x d/run.sh")
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	tmp := ".b.txt" + tempMark + strconv.Itoa(os.Getpid())
	sh(t, dir, "rm d/a.txt && ln -s '"+filepath.Join(outside, "target.txt")+"' d/a.txt && "+
		"ln -s '"+filepath.Join(outside, "target.txt")+"' d/"+tmp+" && "+
		"rm d/c.txt && mkdir -p d/c.txt/deep && printf x > d/c.txt/deep/f && "+
		"printf 'changed\\n' > d/run.sh && chmod -x d/run.sh")
	if err := r.Restore(ctx, base.Commit, []string{"d/a.txt", "d/b.txt", "d/c.txt", "d/run.sh"}); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, outside, "cat target.txt; ls"); got != "outside\ntarget.txt\n" {
		t.Fatalf("the link's target changed: %q", got)
	}
	if got := sh(t, dir, "cat d/a.txt d/b.txt d/c.txt d/run.sh; ls -A d"); got != "a\nb\nc\n#!/bin/sh\na.txt\nb.txt\nc.txt\nrun.sh\n" {
		t.Fatalf("after restore: %q", got)
	}
	for _, p := range []string{"d/a.txt", "d/c.txt"} {
		if fi, err := os.Lstat(filepath.Join(dir, p)); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s is not a file again: %v", p, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "d/run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Fatalf("run.sh lost its executable bit: %v", err)
	}
}
