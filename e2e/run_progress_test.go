package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLongRunArchivesOlderProgress: every checkpoint takes
// RALPH_PROGRESS.md in whole, and a 10,000-task run's file grew to 2.3 MB,
// its last tasks costing two and a half times its first. Now a run whose
// entries pass 128 KB moves the older ones to .ralph/progress/0001.md, …:
// every task's entry is in the file or an archive exactly once and in
// order, the file keeps its preamble and stays under the limit, and git
// shows the archive (shared with the project, like config.toml) but no
// session record. With gc.auto=1 the run packs its checkpoints beside
// them from the 100th on: whether the pack ended by itself or with the
// run, the repository is whole and holds no lock or temporary file.
func TestLongRunArchivesOlderProgress(t *testing.T) {
	t.Parallel()
	const n = 140
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	summary := strings.Repeat("A long summary of the work. ", 40)
	responses := writePlan(t, dir, n, func(i int) string { return fmt.Sprintf("entry %d. %s", i, summary) })
	env := cleanEnv(t, personGit...)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "the plan")
	git("config", "gc.auto", "1")
	srv := inlineServer(t, `{"name":"plan","responses":[`+strings.Join(responses, ",")+`]}`)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--max-iterations", strconv.Itoa(n+5))
	if r.code != 0 {
		t.Fatalf("ralph run: exit %d\n%s", r.code, lastLines(r.stderr, 5))
	}
	progress := readFileT(t, filepath.Join(dir, "RALPH_PROGRESS.md"))
	if !strings.HasPrefix(progress, "# Progress\n") {
		t.Errorf("RALPH_PROGRESS.md lost its preamble:\n%.200s", progress)
	}
	if len(progress) > 128<<10+4<<10 {
		t.Errorf("RALPH_PROGRESS.md is %d bytes after %d entries: its older entries were not moved", len(progress), n)
	}
	archive := readFileT(t, filepath.Join(dir, ".ralph", "progress", "0001.md"))
	all := archive + progress
	last := 0
	for i := 1; i <= n; i++ {
		mark := fmt.Sprintf("<!-- ralph:progress task=t%d attempt=1 ", i)
		if c := strings.Count(all, mark); c != 1 {
			t.Fatalf("task t%d's entry is in the file and its archive %d times, want once", i, c)
		}
		at := strings.Index(all, mark)
		if at < last {
			t.Fatalf("task t%d's entry is out of order", i)
		}
		last = at
	}
	t.Logf("after the run: %s", strings.Join(strings.Fields(git("count-objects", "-v")), " "))
	if got := git("fsck", "--full", "--strict", "--no-dangling"); got != "" {
		t.Errorf("git fsck after the run:\n%s", got)
	}
	if refs := strings.Count(git("for-each-ref", "refs/ralph/"), "\n"); refs < n {
		t.Errorf("%d checkpoint refs after %d tasks", refs, n)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*tmp*"))
	for _, pattern := range []string{"*.lock", "refs/*.lock", "refs/ralph/*/*.lock"} {
		m, _ := filepath.Glob(filepath.Join(dir, ".git", pattern))
		left = append(left, m...)
	}
	if len(left) > 0 {
		t.Errorf("the run left behind %v", left)
	}
	status := git("status", "--porcelain", "--untracked-files=all")
	if !strings.Contains(status, "?? .ralph/progress/0001.md") || strings.Contains(status, ".ralph/sessions") {
		t.Errorf("git status should show the archive and no session record:\n%s", status)
	}
}
