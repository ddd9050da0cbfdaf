package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// failingGit puts a git wrapper first on env's PATH whose write-tree (the
// checkpoint's tree) fails, saying the disk is full, as many times as
// failures says; ralph's own -c settings before the
// subcommand are skipped to find it.
func failingGit(t *testing.T, env []string, failures int) []string {
	t.Helper()
	realGit := needTool(t, "git", "git")
	bin := t.TempDir()
	count := filepath.Join(bin, "failed")
	wrapper := "#!/bin/sh\nsub=; skip=\nfor a in \"$@\"; do\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n" +
		"  case \"$a\" in -c) skip=1;; -*) ;; *) sub=$a; break;; esac\ndone\n" +
		"if [ \"$sub\" = write-tree ]; then\n  n=$(cat " + count + " 2>/dev/null || echo 0)\n" +
		"  if [ \"$n\" -lt " + strconv.Itoa(failures) + " ]; then\n" +
		"    echo $((n+1)) > " + count + "\n    echo 'fatal: cannot write objects: disk full' >&2; exit 128\n  fi\nfi\n" +
		"exec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	out := append([]string(nil), env...)
	for i, kv := range out {
		if strings.HasPrefix(kv, "PATH=") {
			out[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	return out
}

// throughGitsIndex has dir's checkpoints go through git's index and its
// write-tree, which failingGit can fail: an attributes file (empty) says
// git may convert files, where ralph writes no tree itself. A turn's
// checkpoint of the paths its tools named otherwise writes its objects in
// ralph's own process, whose faults TestFaultSweepOfAQuickRun injects.
func throughGitsIndex(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAPassingCheckpointFailureIsTakenAgain: the one turn's checkpoint
// fails once (a disk full for a moment) after it put the turn's files in
// ralph's index. The run takes it again at its end: it exits 0, its
// result counts the files, and undo takes the turn back. The failure used to leave the change in the index
// only, where no later checkpoint saw it, and undo missed the turn.
func TestAPassingCheckpointFailureIsTakenAgain(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	throughGitsIndex(t, dir)
	env := failingGit(t, cleanEnv(t), 1)
	r := ralph(t, dir, env, nil, "--base-url", writer(t).URL, "--output-format", "json", "write a and edit b")
	if r.code != 0 || readFileT(t, filepath.Join(dir, "a.txt")) != "new file\n" {
		t.Fatalf("a checkpoint that failed once: exit %d (want 0, taken again)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"files_changed":2`) {
		t.Fatalf("the result does not count the files the checkpoint taken again holds:\n%s", r.stdout)
	}
	if n := strings.Count(r.stderr, "could not record a git checkpoint"); n != 1 {
		t.Fatalf("warned %d times of the failure, want once:\n%s", n, r.stderr)
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("undo left a.txt, which the turn wrote: %v\n%s", err, u.stdout)
	}
	if b := readFileT(t, filepath.Join(dir, "b.txt")); b != "b1\nb2\nb3\n" {
		t.Fatalf("undo did not put b.txt back: %q\n%s", b, u.stdout)
	}
}
