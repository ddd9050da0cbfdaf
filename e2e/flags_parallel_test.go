package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 68's flags: --parallel bounds the child agents of a one-shot and
// of chat as it says, and --commit with tasks side by side in one work
// tree is refused naming --worktrees, before any work.

// childTask is the task of the stand-in's children, numbered.
const childTask = "child-task-"

// concurrentChildren is a stand-in that answers a parent's first request
// with n spawn_agent calls in one turn, holds each child's request until
// n of them are in flight at once (or hold has passed), and reports the
// most it saw in flight. The parent then says "All done."
func concurrentChildren(t *testing.T, n int, hold time.Duration) (*llmtest.Server, func() int) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inFlight, most := 0, 0
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		child, answered := false, false
		for _, m := range msgs {
			child = child || m.Role == "user" && strings.Contains(m.Content, childTask)
			answered = answered || m.Role == "tool"
		}
		switch {
		case child:
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			cond.Broadcast()
			deadline := time.Now().Add(hold)
			go func() { time.Sleep(hold); cond.Broadcast() }()
			for inFlight < n && most < n && time.Now().Before(deadline) {
				cond.Wait()
			}
			inFlight--
			mu.Unlock()
			return llmtest.Response{Text: "child done"}
		case answered:
			return llmtest.Response{Text: "All done."}
		}
		var calls []llmtest.ToolCall
		for i := 1; i <= n; i++ {
			b, _ := json.Marshal(map[string]string{"task": fmt.Sprintf("%s%d: say done", childTask, i)})
			calls = append(calls, llmtest.ToolCall{Name: "spawn_agent", Arguments: string(b)})
		}
		return llmtest.Response{ToolCalls: calls}
	})
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return most }
}

// TestParallelBoundsChildAgents: ralph --parallel 8 with eight
// spawn_agent calls in one turn has all eight children ask the model at
// once, in a one-shot and in chat (the default, 4, held half of them
// back whatever --parallel said).
func TestParallelBoundsChildAgents(t *testing.T) {
	t.Parallel()
	t.Run("one-shot", func(t *testing.T) {
		srv, most := concurrentChildren(t, 8, 20*time.Second)
		r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_API_KEY=k"), nil, "--parallel", "8", "--base-url", srv.URL, "spawn eight children")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got := most(); got != 8 {
			t.Fatalf("the stand-in saw at most %d children at once with --parallel 8, want 8", got)
		}
	})
	t.Run("chat", func(t *testing.T) {
		srv, most := concurrentChildren(t, 8, 20*time.Second)
		c := startPTY(t, t.TempDir(), chatEnv(t), "chat", "--parallel", "8", "--base-url", srv.URL)
		c.waitIdle(10*time.Second, nil)
		c.typeKeys("spawn eight children\r")
		c.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, "All done.") })
		c.leave(0, 5*time.Second)
		if got := most(); got != 8 {
			t.Fatalf("the stand-in saw at most %d children at once with --parallel 8, want 8", got)
		}
	})
	t.Run("bound", func(t *testing.T) {
		// --parallel 2 holds the others back: the bound is the flag's.
		srv, most := concurrentChildren(t, 8, time.Second)
		r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_API_KEY=k"), nil, "--parallel", "2", "--base-url", srv.URL, "spawn eight children")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got := most(); got != 2 {
			t.Fatalf("the stand-in saw %d children at once with --parallel 2, want 2", got)
		}
	})
}

// TestCommitWithParallelNeedsWorktrees: ralph run --parallel 3 --commit
// without --worktrees would commit each task's files under another
// task's name; it is refused in one sentence naming --worktrees, exit 2,
// before the model is asked anything or a commit is made. /run in a chat
// opened with --parallel 3 is refused the same way; with --worktrees the
// same run goes on and each commit holds its task's file alone.
func TestCommitWithParallelNeedsWorktrees(t *testing.T) {
	t.Parallel()
	titles := []string{"write one.txt one", "write two.txt two", "write three.txt three"}
	dir := taskRepo(t, titles...)
	head := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)

	refused := func(r runResult, what string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--worktrees") || !strings.Contains(lines[0], "--commit") {
			t.Fatalf("%s: exit %d, want 2 and one sentence naming --worktrees\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Fatalf("%s: the model was asked %d times before the refusal", what, n)
		}
		if now := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD")); now != head {
			t.Fatalf("%s: a commit was made:\n%s", what, shIn(t, dir, "git log --oneline"))
		}
	}
	refused(ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--parallel", "3", "--commit"), "ralph run --parallel 3 --commit")
	refused(ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--parallel", "3", "run", "--commit"), "ralph --parallel 3 run --commit")
	sc := ralph(t, dir, env, strings.NewReader("/run --commit\n"), "--parallel", "3", "--base-url", srv.URL, "-y", "script", "-")
	if sc.code == 0 || !strings.Contains(sc.stderr, "--worktrees") || len(srv.Requests()) != 0 {
		t.Fatalf("/run --commit in a script opened with --parallel 3: exit %d\nstdout:\n%s\nstderr:\n%s", sc.code, sc.stdout, sc.stderr)
	}

	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--parallel", "3", "--worktrees")
	if r.code != 0 {
		t.Fatalf("with --worktrees: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"one.txt", "two.txt", "three.txt"} {
		c := strings.TrimSpace(shIn(t, dir, "git log --format=%H -1 "+head+"..HEAD -- "+f))
		if c == "" {
			t.Fatalf("no commit holds %s:\n%s", f, shIn(t, dir, "git log --oneline"))
		}
		if got := shIn(t, dir, "git show --name-only --format= "+c); got != f+"\n" {
			t.Errorf("the commit of %s holds\n%s", f, got)
		}
	}
}
