package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestRunTakesTasksInTheGraphOrder: among tasks of equal priority, run
// takes the one that unblocks the most first, and in exactly the order
// `ralph status --graph` printed before it started.
func TestRunTakesTasksInTheGraphOrder(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tasks := "# Tasks\n\n" +
		"- [ ] leaf <!-- ralph:id=leaf -->\n" +
		"- [ ] wide <!-- ralph:id=wide -->\n" +
		"- [ ] deep <!-- ralph:id=deep -->\n" +
		"- [ ] w1 <!-- ralph:id=w1 depends=wide -->\n" +
		"- [ ] w2 <!-- ralph:id=w2 depends=wide -->\n" +
		"- [ ] d1 <!-- ralph:id=d1 depends=deep -->\n" +
		"- [ ] d2 <!-- ralph:id=d2 depends=d1 -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	g := ralph(t, dir, env, nil, "status", "--graph", "--json")
	var graph struct {
		Order    []struct{ ID, Title string }
		Problems []string
	}
	if err := json.Unmarshal([]byte(g.stdout), &graph); err != nil || g.code != 0 || len(graph.Problems) != 0 {
		t.Fatalf("status --graph --json: exit %d %v\n%s", g.code, err, g.stdout)
	}
	var want []string
	for _, s := range graph.Order {
		want = append(want, s.Title)
	}
	if strings.Join(want, " ") != "deep wide d1 leaf w1 w2 d2" {
		t.Fatalf("status --graph order: %v", want)
	}
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if got := strings.Fields(readFileT(t, filepath.Join(dir, "done.log"))); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("run took %v, status --graph said %v", got, want)
	}
}

// TestRunRefusesTasksThatCanNeverStart: a cycle or a depends= that names
// no task is refused before any work, with exit 2 and the names, and the
// task file is left byte for byte.
func TestRunRefusesTasksThatCanNeverStart(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ tasks, want string }{
		"cycle": {"- [ ] a <!-- ralph:id=a depends=c -->\n- [ ] b <!-- ralph:id=b depends=a -->\n- [ ] c <!-- ralph:id=c depends=b -->\n- [ ] free\n",
			"Tasks a, b, c depend on each other in a cycle"},
		"unknown": {"- [ ] a <!-- ralph:id=a depends=nowhere -->\n- [ ] free\n", `Task a (line 1) depends on "nowhere", which is not a task id`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServerFunc(taskChildModel())
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			path := filepath.Join(dir, "RALPH_TASKS.md")
			if err := os.WriteFile(path, []byte(tc.tasks), 0o644); err != nil {
				t.Fatal(err)
			}
			r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run")
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want 2 naming %q\n%s", r.code, tc.want, r.stderr)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests before the refusal", n)
			}
			if got := readFileT(t, path); got != tc.tasks {
				t.Errorf("the task file changed:\n%s", got)
			}
		})
	}
}
