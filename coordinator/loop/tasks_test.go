package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// A person copies the running task's line, id and all, above itself and
// edits the copy's title, to add a similar task: the work done marks the
// original, and the copy runs once under an id of its own; nothing is
// left in progress and the run ends clean.
func TestLoopCopiedRunningTaskLineMarksTheRightTask(t *testing.T) {
	root, fs := taskProject(t, "# Tasks\n\n- [ ] the task\n")
	path := filepath.Join(root, "RALPH_TASKS.md")
	var mu sync.Mutex
	var worked []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 0},
		Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
			mu.Lock()
			worked = append(worked, task.ID+" "+task.Title)
			first := len(worked) == 1
			mu.Unlock()
			if first {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return Outcome{}
				}
				line := strings.SplitAfter(string(data), "\n")[2] // "- [~] the task <!-- ralph:id=t1 -->\n"
				copied := strings.Replace(line, "the task", "a similar task", 1)
				if err := os.WriteFile(path, []byte(strings.Replace(string(data), line, copied+line, 1)), 0o644); err != nil {
					t.Error(err)
				}
			}
			return Outcome{Completed: true, Summary: "did " + task.Title}
		}),
	})
	data, _ := os.ReadFile(path)
	if res.IsError || len(res.Done) != 2 {
		t.Fatalf("result %+v\n%s", res, data)
	}
	// A first attempt writes no attempts= (planfile.StartAttempt).
	want := "# Tasks\n\n- [x] a similar task <!-- ralph:id=t2 -->\n- [x] the task <!-- ralph:id=t1 -->\n"
	if string(data) != want {
		t.Fatalf("RALPH_TASKS.md:\n%s\nwant:\n%s", data, want)
	}
	if strings.Join(worked, ",") != "t1 the task,t2 a similar task" {
		t.Fatalf("worked %q", worked)
	}
}

// A configuration error (a bad key, an unknown model) stops the loop with
// its task open and with the attempts it had: the attempt never really
// happened, so it spends none, on a first attempt or a later one.
func TestLoopConfigErrorSpendsNoAttempt(t *testing.T) {
	root, fs := taskProject(t, "- [ ] first <!-- ralph:id=t1 -->\n- [ ] second <!-- ralph:id=t2 attempts=1 -->\n")
	run := func(want string) {
		t.Helper()
		res := Run(context.Background(), Options{
			Fs: fs, Root: root,
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome {
				return Outcome{Err: &llm.Error{Kind: errors.New("unknown model"), Config: true, Msg: "the model \"x\" does not exist"}}
			}),
		})
		if res.Reason != ReasonConfig || !res.IsError {
			t.Fatalf("result %+v", res)
		}
		if data, _ := os.ReadFile(filepath.Join(root, "RALPH_TASKS.md")); string(data) != want {
			t.Fatalf("RALPH_TASKS.md after a configuration error:\n%s\nwant:\n%s", data, want)
		}
	}
	run("- [ ] first <!-- ralph:id=t1 -->\n- [ ] second <!-- ralph:id=t2 attempts=1 -->\n")
	if _, err := planfile.UpdateTasks(fs, root, func(f *planfile.TaskFile) error { return f.SetState("t1", planfile.TaskDone) }); err != nil {
		t.Fatal(err)
	}
	run("- [x] first <!-- ralph:id=t1 -->\n- [ ] second <!-- ralph:id=t2 attempts=1 -->\n")
}

// The session of a task loop counts its agents' turns, all tasks
// together, beside its iterations: status no longer says "0 turns" of a
// loop whose agents took many; a resumed loop goes on from its count.
func TestLoopCountsItsAgentsTurns(t *testing.T) {
	root, fs := taskProject(t, taskList(2))
	store := &stateStore{}
	work := fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true, Turns: 3} })
	if res := Run(context.Background(), Options{Fs: fs, Root: root, Store: store, Worker: work}); res.IsError {
		t.Fatalf("result %+v", res)
	}
	if st := store.state(); st.Turns != 6 || st.Iteration != 2 {
		t.Fatalf("turns %d, iteration %d; want 6 and 2", st.Turns, st.Iteration)
	}
	root, fs = taskProject(t, taskList(1))
	prior := memory.State{Turns: 6, Iteration: 2}
	if res := Run(context.Background(), Options{Fs: fs, Root: root, Store: store, Worker: work, Prior: &prior}); res.IsError {
		t.Fatalf("result %+v", res)
	}
	if st := store.state(); st.Turns != 9 {
		t.Fatalf("resumed: turns %d, want 9", st.Turns)
	}
}
