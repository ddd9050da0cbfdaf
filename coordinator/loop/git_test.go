package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// fakeGit is a TaskGit that records what the loop asked of it.
type fakeGit struct {
	mu     sync.Mutex
	calls  []string
	done   func(task planfile.Task, attempt int) error
	closed bool
	// written are the paths each Ended was given, by task ("nil" for
	// none: look at everything).
	written map[string]string
}

func (g *fakeGit) log(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, s)
}

func (g *fakeGit) Workspace(_ context.Context, t planfile.Task, attempt int) (Workspace, error) {
	g.log("workspace " + t.ID)
	return Workspace{Dir: "/wt/" + t.ID, Branch: "ralph/" + t.ID}, nil
}

func (g *fakeGit) Ended(_ context.Context, t planfile.Task, attempt int, ws Workspace, written []string) []git.FileChange {
	g.log("ended " + t.ID + " in " + ws.Dir)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.written == nil {
		g.written = map[string]string{}
	}
	g.written[t.ID] = "nil"
	if written != nil {
		g.written[t.ID] = "[" + strings.Join(written, " ") + "]"
	}
	return nil
}

func (g *fakeGit) Done(_ context.Context, t planfile.Task, attempt int, summary string, ws Workspace) (string, []git.FileChange, error) {
	g.log("done " + t.ID)
	if err := g.done(t, attempt); err != nil {
		return "", nil, err
	}
	return "merged " + t.ID, []git.FileChange{{Path: t.ID + ".txt", Added: 1}}, nil
}

func (g *fakeGit) Close(context.Context) []string {
	g.closed = true
	return []string{"closed"}
}

func TestLoopKeepsDoneWorkThroughGit(t *testing.T) {
	root, fs := taskProject(t, taskList(3))
	g := &fakeGit{done: func(task planfile.Task, attempt int) error {
		switch {
		case task.Title == "task number 1":
			return &git.MergeError{Branch: "ralph/" + task.ID, Files: []string{"a.txt", "b.txt"}}
		case task.Title == "task number 2" && attempt == 1:
			return errors.New("the pre-commit hook refused")
		}
		return nil
	}}
	var verified sync.Map
	var notices []string
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Policy: decide.Policy{Retries: 2, Backoff: time.Millisecond}, Git: g,
		Breaker: func(Stats) (bool, error) { return false, nil },
		Notify:  func(s string) { notices = append(notices, s) },
		Worker: workspaceWorker(func(_ context.Context, task planfile.Task, attempt int, ws Workspace) Outcome {
			if ws.Dir != "/wt/"+task.ID {
				return Outcome{Err: errors.New("not in the task's workspace: " + ws.Dir)}
			}
			return Outcome{Completed: true, Summary: "did " + task.Title}
		}),
		VerifyCommands: []string{"check"}, Verify: func(_ context.Context, ws Workspace, _ string) (bool, string) {
			verified.Store(ws.Dir, true)
			return true, ""
		},
	})
	if len(res.Done) != 2 || len(res.Failed) != 1 {
		t.Fatalf("result = %+v\ncalls %v", res, g.calls)
	}
	f := loadTasks(t, fs, root)
	// A conflict fails the task at once, retries or not, and its line
	// names the files and the branch.
	bad, _ := f.Find(res.Failed[0])
	if bad.Title != "task number 1" || bad.Attempts != 1 || bad.State != planfile.TaskFailed {
		t.Fatalf("the conflicting task = %+v", bad)
	}
	data, _ := os.ReadFile(filepath.Join(root, "RALPH_TASKS.md"))
	if !strings.Contains(string(data), "conflict=a.txt,b.txt branch=ralph/"+bad.ID) {
		t.Fatalf("RALPH_TASKS.md does not name the conflict:\n%s", data)
	}
	// Another failure to keep the work is a failed attempt: retried.
	two, _ := f.Find("t2")
	if two.State != planfile.TaskDone || two.Attempts != 2 {
		t.Fatalf("task 2 = %+v", two)
	}
	if _, ok := verified.Load("/wt/t3"); !ok {
		t.Error("verification did not run in the task's workspace")
	}
	// Every attempt ended in git before its work was kept.
	for _, id := range []string{"t1", "t2", "t3"} {
		ended, done := -1, -1
		for i, c := range g.calls {
			if c == "ended "+id+" in /wt/"+id && ended < 0 {
				ended = i
			}
			if c == "done "+id && done < 0 {
				done = i
			}
		}
		if ended < 0 || done < ended {
			t.Errorf("%s: calls %v", id, g.calls)
		}
	}
	if !g.closed {
		t.Error("the loop did not close git's part")
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{"merged t3", "merging ralph/t1 conflicts in a.txt, b.txt; the branch ralph/t1 is kept", "closed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
}

// workspaceWorker is a Worker from a function that sees the workspace.
type workspaceWorker func(ctx context.Context, t planfile.Task, attempt int, ws Workspace) Outcome

func (f workspaceWorker) Work(ctx context.Context, a Assignment) Outcome {
	return f(ctx, a.Task, a.Attempt, a.Workspace)
}

// TestLoopTellsGitWhatAnAttemptWrote: the paths an attempt's file tools
// wrote (Outcome.Written) reach the checkpoint only while nothing else
// ran since: an attempt whose verify commands ran (they may change any
// file), and one that may have changed anything (nil), have the whole
// work tree looked at.
func TestLoopTellsGitWhatAnAttemptWrote(t *testing.T) {
	for _, tc := range []struct {
		name   string
		verify []string
		want   map[string]string
	}{
		{"no verify", nil, map[string]string{"t1": "[a.txt]", "t2": "nil", "t3": "[]"}},
		{"verified", []string{"check"}, map[string]string{"t1": "nil", "t2": "nil", "t3": "nil"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, fs := taskProject(t, taskList(3))
			g := &fakeGit{done: func(planfile.Task, int) error { return nil }}
			Run(context.Background(), Options{
				Fs: fs, Root: root, Policy: decide.Policy{Retries: 1, Backoff: time.Millisecond}, Git: g,
				Breaker: func(Stats) (bool, error) { return false, nil },
				Worker: fnWorker(func(_ context.Context, task planfile.Task, _ int) Outcome {
					out := Outcome{Completed: true}
					switch task.Title {
					case "task number 1":
						out.Written = []string{"a.txt"}
					case "task number 3":
						out.Written = []string{}
					}
					return out
				}),
				VerifyCommands: tc.verify, Verify: func(context.Context, Workspace, string) (bool, string) { return true, "" },
			})
			for id, want := range tc.want {
				if got := g.written[id]; got != want {
					t.Errorf("%s: Ended was given %s, want %s", id, got, want)
				}
			}
		})
	}
}
