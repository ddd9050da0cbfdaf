package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestChatTalksWhileTheLoopIsPaused: a task loop /paused in chat leaves the
// prompt free. A question gets its answer while the loop stays paused (the
// second task not started, still open in RALPH_TASKS.md); /run is
// refused while a conversation runs; Ctrl-C stops only the conversation;
// /run then carries the loop through both tasks.
func TestChatTalksWhileTheLoopIsPaused(t *testing.T) {
	t.Parallel()
	tasks := taskChildModel()
	// The first task's child waits at its first request until the test
	// has paused the loop, so the pause lands while it is in flight.
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var mu sync.Mutex
	var titles []string // the task of each child request, in order
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		for _, m := range msgs {
			if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				mu.Lock()
				titles = append(titles, sm[2])
				mu.Unlock()
				if sm[2] == "alpha" {
					holdOnce.Do(func() { close(held) })
					<-release
				}
				return tasks(r)
			}
		}
		last := msgs[len(msgs)-1].Content
		switch {
		case strings.Contains(last, "secret word"):
			return llmtest.Response{Text: "The secret word is pineapple."}
		case strings.Contains(last, "long story"):
			return llmtest.Response{Text: strings.Repeat("once upon a time ", 100), ChunkSize: 8, ChunkDelayMS: 40}
		}
		return llmtest.Response{Text: "nothing to say"}
	})
	t.Cleanup(srv.Close)
	started := func(title string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range titles {
			if s == title {
				return true
			}
		}
		return false
	}
	dir := t.TempDir()
	writeTasks(t, dir, "alpha", "beta")
	readTasks := func() string {
		data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		return string(data)
	}
	stillPaused := func(when string) {
		t.Helper()
		if data := readTasks(); started("beta") || !strings.Contains(data, "- [x] alpha") || !strings.Contains(data, "- [ ] beta") {
			t.Fatalf("%s the loop did not stay paused (beta started: %v):\n%s", when, started("beta"), data)
		}
		// The session says so too: a conversation beside the paused loop
		// does not make it running, completed or interrupted.
		if data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json")); !strings.Contains(string(data), `"status": "paused"`) {
			t.Fatalf("%s session.json does not say paused:\n%s", when, data)
		}
	}
	const pausedPrompt = "ralph (task loop paused, /run goes on)>"

	r := startPTY(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "chat")
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("/run\r")
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatalf("the first task's child never asked the model; the screen shows:\n%s", r.screen())
	}
	r.typeKeys("/pause\r")
	r.waitFor("task loop: paused", 5*time.Second)
	r.waitFor("task loop pausing after the task in flight", 5*time.Second)
	releaseOnce.Do(func() { close(release) })
	waitFor(t, "the session to say paused", 15*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
		return strings.Contains(string(data), `"status": "paused"`)
	})
	r.waitFor(pausedPrompt, 5*time.Second)
	stillPaused("once paused,")

	// A question is answered beside the paused loop.
	r.typeKeys("what is the secret word?\r")
	r.waitFor("The secret word is pineapple.", 10*time.Second)
	r.waitFor(pausedPrompt, 5*time.Second)
	stillPaused("after the answer,")

	// A hard stop during a conversation stops the conversation only.
	r.typeKeys("tell me a long story\r")
	r.waitFor("task loop paused · conversation running", 10*time.Second)
	waitFor(t, "the story to stream", 10*time.Second, func() bool { return srv.Active() == 1 })
	r.typeKeys("/run\r")
	r.waitFor("/run: a conversation is still running beside the paused loop", 5*time.Second)
	r.typeKeys("\x03")
	r.waitFor("stopped: ", 5*time.Second)
	r.waitFor(pausedPrompt, 5*time.Second)
	// Go's HTTP server notices the closed connection late on a loaded
	// machine; a story that was not stopped would stream for 6 s more.
	waitFor(t, "no request streaming after the stop", 3*time.Second, func() bool { return srv.Active() == 0 })
	stillPaused("after Ctrl-C in the conversation,")
	if s := r.screen(); strings.Contains(s, "task loop: interrupted") || strings.Contains(s, "stopped: the task loop") {
		t.Fatalf("the conversation's Ctrl-C stopped the loop:\n%s", s)
	}

	r.typeKeys("/run\r")
	r.waitFor("task loop: all tasks done", 20*time.Second)
	if data := readTasks(); strings.Count(data, "- [x]") != 2 {
		t.Fatalf("after /run:\n%s", data)
	}
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
}
