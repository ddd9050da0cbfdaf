package coordinator

import (
	"context"
	"fmt"
	"github.com/ralph-dev/ralph/coordinator/event"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sleeping reports whether a live process's command line holds s.
func sleeping(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) && !strings.Contains(string(st), ") Z ") {
			return true
		}
	}
	return false
}

// TestBackgroundNoteIsInTheTurnAndClearEndsThem: the model is told of
// the background command it started at the end of the step's last tool
// result and at the start of the next prompt, never in the system
// prompt, and never on the face's line of the result; /clear ends it.
func TestBackgroundNoteIsInTheTurnAndClearEndsThem(t *testing.T) {
	t.Parallel()
	mark := fmt.Sprintf("%d", 6_000_000+rand.IntN(1_000_000))
	h := newHarness(t, `{"name":"x","responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"sleep `+mark+`\",\"background\":true}"}]},
		{"text":"started"},{"text":"still there"}]}`)
	if res := h.coord.Run(context.Background(), "start it"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	msgs := h.lastRequestMessages()
	last := msgs[len(msgs)-1]
	if !strings.Contains(last.Content, "[ralph: background command: bg_1 `sleep "+mark+"` (running for ") || msgs[0].Content != "system prompt" {
		t.Fatalf("the step's last result %q; system prompt %q", last.Content, msgs[0].Content)
	}
	h.mu.Lock()
	for _, ev := range h.events {
		if ev.Type == event.ToolResult && strings.Contains(ev.Output, "[ralph: background") {
			t.Errorf("the face's tool result carries the note: %q", ev.Output)
		}
	}
	h.mu.Unlock()
	h.coord.Run(context.Background(), "how is it")
	msgs = h.lastRequestMessages()
	if p := msgs[len(msgs)-1].Content; !strings.HasPrefix(p, "[ralph: background command: bg_1 `sleep "+mark+"`") || !strings.HasSuffix(p, "how is it") {
		t.Fatalf("the next prompt: %q", p)
	}
	if !sleeping("sleep " + mark) {
		t.Fatal("the background command is not running")
	}
	if _, err := h.coord.Reset(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sleeping("sleep " + mark) {
		if time.Now().After(deadline) {
			t.Fatal("the background command outlived /clear")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
