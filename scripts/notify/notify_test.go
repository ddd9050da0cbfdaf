package notify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNotifyCommand: notify_command gets the event as JSON on its stdin,
// in the background; a failing one is a warning with its words, a hung one
// is stopped at its timeout, and Close waits for them.
func TestNotifyCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got.json")
	var mu sync.Mutex
	var warnings []string
	warn := func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	n := &Notifier{Command: "cat > " + out, Project: "/p", SessionID: "s1", Warn: warn,
		Sequence: func(title, body string) string { return "<" + title + ":" + body + ">" }}
	yes := false
	if seq := n.Notify(Event{Event: RunEnded, Text: "all tasks done", IsError: &yes}); seq != "<ralph:all tasks done>" {
		t.Errorf("sequence = %q", seq)
	}
	n.Close()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil || ev.Event != RunEnded || ev.Project != "/p" || ev.SessionID != "s1" ||
		ev.Text != "all tasks done" || ev.IsError == nil || *ev.IsError || ev.Time.IsZero() {
		t.Fatalf("the command read %s (%v)", data, err)
	}

	n = &Notifier{Command: "echo boom >&2; exit 3", Warn: warn}
	n.Notify(Event{Event: BreakerOpen, Text: "x"})
	n.Close()
	n = &Notifier{Command: "sleep 30 & sleep 30", Warn: warn, Timeout: 200 * time.Millisecond}
	start := time.Now()
	n.Notify(Event{Event: Question, Text: "x"})
	n.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a hung command held Close for %s", took)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"notify_command failed for breaker_open: exit status 3: boom",
		"notify_command failed for question: it did not finish within 200ms and was stopped"}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
	// No command and no terminal: nothing at all.
	var none *Notifier
	if none.Notify(Event{Event: RunEnded}) != "" {
		t.Error("a nil notifier wrote something")
	}
	none.Close()
}

// The Notification hooks hear every notification, a question as Claude
// Code's permission_prompt, and Close waits for them.
func TestNotifyFiresTheHooks(t *testing.T) {
	var mu sync.Mutex
	var got []string
	n := &Notifier{Hook: func(message, kind string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, kind+": "+message)
	}}
	n.Notify(Event{Event: Question, Text: "run `make`?"})
	n.Notify(Event{Event: RunEnded, Text: "the run ended"})
	n.Close()
	sort.Strings(got)
	if strings.Join(got, "|") != "permission_prompt: run `make`?|run_ended: the run ended" {
		t.Fatalf("hooks heard %q", got)
	}
}
