package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunKeepsALineDependencyOnceTheTaskHasAnID (issue 92, item 1): a
// task that depends on another named by its line (depends=L3, as
// docs/sessions.md allows for a task without an id) still runs once
// ralph gives that task an id: the reference becomes the id in the same
// write, and every task is done. Before, the task waited for ever on
// "L3, which is not a task id".
func TestRunKeepsALineDependencyOnceTheTaskHasAnID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := "# Tasks\n\n" +
		"- [ ] write a.txt one\n" +
		"- [ ] write b.txt two\n" +
		"- [ ] write g.txt three <!-- ralph:depends=L3 priority=1 -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fileTaskModel(t, nil)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "--parallel", "2")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	want := "# Tasks\n\n" +
		"- [x] write a.txt one <!-- ralph:id=t1 -->\n" +
		"- [x] write b.txt two <!-- ralph:id=t2 -->\n" +
		"- [x] write g.txt three <!-- ralph:id=t3 depends=t1 priority=1 -->\n"
	if got != want {
		t.Errorf("RALPH_TASKS.md:\n%s\nwant\n%s", got, want)
	}
	if g := readFileT(t, filepath.Join(dir, "g.txt")); g != "three\n" {
		t.Errorf("g.txt = %q", g)
	}
	// The dependency held: g started only once a was done.
	events := readFileT(t, filepath.Join(sessionDir(t, dir), "events.jsonl"))
	aDone, gStart := strings.Index(events, `"t1 done"`), strings.Index(events, `"t3 in_progress"`)
	if aDone < 0 || gStart < 0 || gStart < aDone {
		t.Errorf("t3 started at %d, t1 was done at %d", gStart, aDone)
	}
}

// TestRunSaysALineDependencyOnNoTaskInOneSentence: a depends= naming a
// line that holds no task is refused before any work, in one sentence
// naming it, and the run ends.
func TestRunSaysALineDependencyOnNoTaskInOneSentence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := "# Tasks\n\n- [ ] write a.txt one\n- [ ] write g.txt three <!-- ralph:depends=L9 -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fileTaskModel(t, nil)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run")
	if r.code != 2 || !strings.Contains(r.stderr, `depends on "L9", which is not a task id, so it will never be ready.`) {
		t.Errorf("run: exit %d\n%s", r.code, r.stderr)
	}
}
