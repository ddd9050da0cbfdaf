package acp

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// translator turns the coordinator's events into the protocol's updates.
// It runs on the updates goroutine only.
type translator struct {
	ss *session
	// streamed and thought are what the main agent's turn has sent as
	// chunks so far, so the turn's whole text (assistant, thinking)
	// sends only what the lossy deltas missed.
	streamed, thought strings.Builder
	// calls are the tool calls announced and not yet finished.
	calls map[string]call
}

// call is what a tool_call said, for its update.
type call struct {
	name string
	args json.RawMessage
	// before is a write_file's file as it was before the call (nil: none).
	before *string
}

func newTranslator(ss *session) *translator {
	return &translator{ss: ss, calls: map[string]call{}}
}

// event is the updates one event makes (none for most kinds).
func (t *translator) event(ev event.Event) []sdk.SessionUpdate {
	main := ev.AgentID == "" || ev.AgentID == event.MainAgent
	switch ev.Type {
	case event.SessionStarted, event.TurnStarted:
		t.streamed.Reset()
		t.thought.Reset()
	case event.TextDelta:
		if main && ev.Text != "" {
			t.streamed.WriteString(ev.Text)
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(ev.Text)}
		}
	case event.Assistant:
		if main {
			return rest(&t.streamed, ev.Text, sdk.UpdateAgentMessageText)
		}
	case event.ThinkingDelta:
		if main && ev.Text != "" {
			t.thought.WriteString(ev.Text)
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(ev.Text)}
		}
	case event.Thinking:
		if main {
			return rest(&t.thought, ev.Text, sdk.UpdateAgentThoughtText)
		}
	case event.ToolCall:
		return []sdk.SessionUpdate{t.toolCall(ev)}
	case event.ToolResult:
		return []sdk.SessionUpdate{t.toolResult(ev)}
	case event.TodoUpdated:
		if main && ev.Todo != nil {
			return []sdk.SessionUpdate{plan(*ev.Todo)}
		}
	case event.Error:
		if l, ok := eventwords.EventLine(ev); ok && main {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\n\n" + l.String() + "\n")}
		}
	case event.Warning:
		if l, ok := eventwords.EventLine(ev); ok {
			t.ss.srv.say(l.String())
		}
	}
	return nil
}

// rest is what of whole the deltas did not send already, as one update.
func rest(sent *strings.Builder, whole string, up func(string) sdk.SessionUpdate) []sdk.SessionUpdate {
	had := sent.String()
	sent.Reset()
	if strings.HasPrefix(whole, had) {
		whole = whole[len(had):]
	}
	if whole == "" {
		return nil
	}
	return []sdk.SessionUpdate{up(whole)}
}

// toolCall announces a tool call.
func (t *translator) toolCall(ev event.Event) sdk.SessionUpdate {
	c := call{name: ev.ToolName, args: ev.ToolArgs}
	if ev.ToolName == "write_file" {
		c.before = t.ss.out.takeBefore(ev.ToolID)
	}
	t.calls[ev.ToolID] = c
	status := sdk.ToolCallStatusInProgress
	if ev.Asking {
		status = sdk.ToolCallStatusPending
	}
	var raw any
	if len(ev.ToolArgs) > 0 {
		raw = ev.ToolArgs
	}
	return sdk.StartToolCall(sdk.ToolCallId(ev.ToolID), eventwords.ToolCall(ev.ToolName, ev.ToolArgs),
		sdk.WithStartKind(toolKind(ev.ToolName)), sdk.WithStartStatus(status),
		sdk.WithStartLocations(t.locations(ev.ToolArgs)), sdk.WithStartRawInput(raw))
}

// toolResult finishes a tool call: its output, and for an edit its diff.
func (t *translator) toolResult(ev event.Event) sdk.SessionUpdate {
	c := t.calls[ev.ToolID]
	delete(t.calls, ev.ToolID)
	status := sdk.ToolCallStatusCompleted
	if ev.IsError {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if !ev.IsError {
		content = append(content, t.diffs(c)...)
	}
	if ev.Output != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock(ev.Output)))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(ev.ToolID), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content))
}

// diffs are an edit's changes as the protocol's diffs.
func (t *translator) diffs(c call) []sdk.ToolCallContent {
	var a struct {
		Path      string  `json:"path"`
		Content   *string `json:"content"`
		OldString string  `json:"old_string"`
		NewString *string `json:"new_string"`
		Edits     []struct {
			OldString string  `json:"old_string"`
			NewString *string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(c.args, &a) != nil || a.Path == "" {
		return nil
	}
	abs := t.ss.abs(a.Path)
	diff := func(old *string, new string) sdk.ToolCallContent {
		return sdk.ToolCallContent{Diff: &sdk.ToolCallContentDiff{Type: "diff", Path: abs, OldText: old, NewText: new}}
	}
	switch c.name {
	case "write_file":
		if a.Content != nil {
			return []sdk.ToolCallContent{diff(c.before, *a.Content)}
		}
	case "edit_file":
		var out []sdk.ToolCallContent
		if a.NewString != nil {
			old := a.OldString
			out = append(out, diff(&old, *a.NewString))
		}
		for _, e := range a.Edits {
			if e.NewString != nil {
				old := e.OldString
				out = append(out, diff(&old, *e.NewString))
			}
		}
		return out
	}
	return nil
}

// locations are the files a call names, absolute, with a line if given.
func (t *translator) locations(args json.RawMessage) []sdk.ToolCallLocation {
	var a struct {
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
		Line     *int   `json:"line"`
		Offset   *int   `json:"offset"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	p := a.Path
	if p == "" {
		p = a.FilePath
	}
	if p == "" {
		return nil
	}
	l := sdk.ToolCallLocation{Path: t.ss.abs(p), Line: a.Line}
	if l.Line == nil && a.Offset != nil {
		l.Line = a.Offset
	}
	return []sdk.ToolCallLocation{l}
}

// argPath is a call's path argument.
func argPath(args json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// toolKind is the protocol's kind of ralph's tool, which lets an editor
// pick an icon and a view.
func toolKind(name string) sdk.ToolKind {
	switch name {
	case "read_file", "Read", "view_image", "skill", "Skill":
		return sdk.ToolKindRead
	case "write_file", "edit_file", "apply_patch", "Write", "Edit", "MultiEdit", "write_plan":
		return sdk.ToolKindEdit
	case "list_files", "search", "Glob", "Grep":
		return sdk.ToolKindSearch
	case "run_command", "Bash", "shell", "local_shell", "shell_command", "command_output", "stop_command", "BashOutput", "KillShell":
		return sdk.ToolKindExecute
	case "web_fetch", "WebFetch":
		return sdk.ToolKindFetch
	case "update_plan", "TodoWrite", "record_decision", "remember":
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// plan is the todo list as the protocol's plan: the whole list each time.
func plan(l memory.TodoList) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(l.Items))
	for _, it := range l.Items {
		st := sdk.PlanEntryStatusPending
		switch it.Status {
		case memory.TodoCompleted:
			st = sdk.PlanEntryStatusCompleted
		case memory.TodoInProgress:
			st = sdk.PlanEntryStatusInProgress
		}
		entries = append(entries, sdk.PlanEntry{Content: it.Step, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

// beforeMax bounds the file read for a write's diff: a larger file's
// diff shows the new text alone.
const beforeMax = 1 << 20

// fileBefore is a file's text before a write, nil when it does not exist
// or is too large to show.
func (ss *session) fileBefore(path string) *string {
	if path == "" {
		return nil
	}
	f, err := ss.p.Fs.Open(ss.abs(path))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, beforeMax+1))
	if err != nil || len(b) > beforeMax {
		return nil
	}
	s := string(b)
	return &s
}

// abs is a path the model gave, absolute: relative ones are the
// project root's.
func (ss *session) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(ss.p.Root, p)
}
