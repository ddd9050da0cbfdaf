package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory"
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
		Fs: fs, Root: root, Retries: 0,
		Worker: fnWorker(func(_ context.Context, task memory.Task, _ int) Outcome {
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
				line := strings.SplitAfter(string(data), "\n")[2] // "- [~] the task <!-- ralph:id=t1 attempts=1 -->\n"
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
	want := "# Tasks\n\n- [x] a similar task <!-- ralph:id=t2 attempts=1 -->\n- [x] the task <!-- ralph:id=t1 attempts=1 -->\n"
	if string(data) != want {
		t.Fatalf("RALPH_TASKS.md:\n%s\nwant:\n%s", data, want)
	}
	if strings.Join(worked, ",") != "t1 the task,t2 a similar task" {
		t.Fatalf("worked %q", worked)
	}
}
