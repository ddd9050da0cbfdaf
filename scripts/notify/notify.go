// Package notify tells the person about what they may be waiting for, away
// from the terminal: a run that ended, a breaker that tripped, a question
// or a full disk. It writes the bell and a desktop notification's sequence
// for the face to print, runs the person's notify_command with the event as
// JSON, and fires the session's Notification hooks; the faces of scripts/cli
// decide when.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers"
)

// What a notification is about (Event.Event).
const (
	RunEnded    = "run_ended"    // a task loop ended, however it did
	BreakerOpen = "breaker_open" // the circuit breaker tripped
	Question    = "question"     // a question waits for a person
	DiskFull    = "disk_full"    // the task loop waits for space on a full disk
)

// Event is the JSON summary notify_command reads on its stdin.
type Event struct {
	Event     string    `json:"event"`
	Text      string    `json:"text"`
	Project   string    `json:"project"`
	SessionID string    `json:"session_id,omitempty"`
	Time      time.Time `json:"time"`
	// Set for run_ended.
	Reason   string             `json:"reason,omitempty"`
	IsError  *bool              `json:"is_error,omitempty"`
	ExitCode *int               `json:"exit_code,omitempty"`
	Tasks    *memory.TaskCounts `json:"tasks,omitempty"`
}

// defaultTimeout bounds one run of notify_command: a hung command is
// killed (with its process group) rather than holding up ralph's exit.
const defaultTimeout = 5 * time.Second

// Notifier tells the person about what they may be waiting for, away from
// the terminal: the bell and a desktop notification on a terminal that
// shows one (scripts/screen/terminal decides which), and notify_command from the
// user's config, which gets a Event as JSON on its stdin. The
// command runs in the background, bounded by defaultTimeout; its failure
// is a warning. Close waits for the commands still running.
type Notifier struct {
	// Sequence is the bell and the desktop notification to write to the
	// terminal, or "" when standard error is not one
	// (terminal.Facts.Notification).
	Sequence func(title, body string) string
	// Command is notify_command; "" runs nothing.
	Command string
	// Env is the command's environment (nil: ralph's own).
	Env []string
	// Project and SessionID go into every event.
	Project, SessionID string
	// Warn reports a command that failed, in one line.
	Warn func(string)
	// Timeout bounds one run of the command (0: defaultTimeout).
	Timeout time.Duration
	// Hook, when set, fires the session's Notification hooks with the
	// notification's text and kind (Claude Code's permission_prompt for
	// a question, else the event's name), in the background like the
	// command.
	Hook func(message, kind string)

	wg sync.WaitGroup
}

// Notify sends ev to the command, and returns the sequence that shows it
// on the terminal, for the caller to write where its output goes.
func (n *Notifier) Notify(ev Event) string {
	if n == nil {
		return ""
	}
	ev.Project, ev.SessionID = n.Project, n.SessionID
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	n.run(ev)
	if n.Hook != nil {
		kind := ev.Event
		if kind == Question {
			kind = "permission_prompt"
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.Hook(ev.Text, kind)
		}()
	}
	if n.Sequence == nil {
		return ""
	}
	return n.Sequence("ralph", ev.Text)
}

// run starts the command for ev, in the background.
func (n *Notifier) run(ev Event) {
	if strings.TrimSpace(n.Command) == "" {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.exec(data); err != nil && n.Warn != nil {
			n.Warn(fmt.Sprintf("notify_command failed for %s: %v", ev.Event, err))
		}
	}()
}

// exec runs the command once with data on its stdin.
func (n *Notifier) exec(data []byte) error {
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	env := n.Env
	if env == nil {
		env = os.Environ()
	}
	cmd := workers.NotifyCommand(ctx, n.Project, env, n.Command)
	cmd.Stdin = bytes.NewReader(data)
	errb := boundedBuffer{text.LockedBuffer{Limit: 4096}}
	cmd.Stderr = &errb
	ownGroup(cmd)
	// Grandchildren holding stderr open must not keep Wait waiting.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("it did not finish within %s and was stopped", timeout)
	case err != nil:
		if msg := errb.firstLine(); msg != "" {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	}
	return nil
}

// New is the notifier of a run on the project at root with terminal
// facts t: notify_command from the user's config, the desktop notification
// where t's standard error is a terminal that shows one, and warnings
// written to stderr.
func New(root, session, command, keyVar string, t terminal.Facts, stderr io.Writer) *Notifier {
	return &Notifier{
		Sequence: t.Notification, Command: command, Env: withoutKey(keyVar), Project: root, SessionID: session,
		Warn: func(s string) { fmt.Fprintln(stderr, "ralph: warning: "+s) },
	}
}

// Close waits for the commands still running (each at most
// defaultTimeout).
func (n *Notifier) Close() {
	if n != nil {
		n.wg.Wait()
	}
}

// boundedBuffer keeps the first 4 KB written to it.
type boundedBuffer struct{ text.LockedBuffer }

func (w *boundedBuffer) firstLine() string {
	line, _, _ := strings.Cut(strings.TrimSpace(w.String()), "\n")
	return text.Clip(text.StripControls(line), 200)
}

// withoutKey is ralph's environment without the model's API key, which a
// notification has no use for.
func withoutKey(keyVar string) []string {
	return childenv.Without(os.Environ(), keyVar)
}

// Write writes a notification's sequence to w, which is the
// terminal when it is not empty.
func Write(w io.Writer, seq string) {
	if seq != "" && w != nil {
		_, _ = io.WriteString(w, seq)
	}
}
