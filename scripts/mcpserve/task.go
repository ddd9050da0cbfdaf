package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/scripts/contract"
)

//go:embed task.md
var taskDescription string

// TaskParams are the task tool's arguments.
type TaskParams struct {
	DirParam
	Task      string `json:"task" jsonschema:"the task, in words, as you would give it to ralph on the command line"`
	SessionID string `json:"session_id,omitempty" jsonschema:"continue this session (its id, or a unique part of it) with this task as the follow-up"`
	Model     string `json:"model,omitempty" jsonschema:"the model to use (default: the person's configured model)"`
	MaxTurns  int    `json:"max_turns,omitempty" jsonschema:"stop after this many model turns (default: the person's configured limit)"`
}

// TaskResult is what the task tool returns: ralph's one-shot result, with
// the paths of the files it changed.
type TaskResult struct {
	Answer    string `json:"answer"`
	IsError   bool   `json:"is_error"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// FilesChanged are the paths, relative to the work tree's top, of
	// the files the task changed (known in a git work tree only).
	FilesChanged []string `json:"files_changed"`
	CostUSD      *float64 `json:"cost_usd"`
	NumTurns     int      `json:"num_turns"`
	DurationMS   int64    `json:"duration_ms"`
	// PermissionDenials are the calls refused because the person's
	// approval policy would have asked about them.
	PermissionDenials []Denial `json:"permission_denials,omitempty"`
	Error             string   `json:"error,omitempty"`
	ExitCode          int      `json:"exit_code"`
}

// Denial is a call refused for want of approval, as the one-shot's
// result names it (contract.Denial): a command, or another tool's call
// with its arguments. Its arguments are an object here, not the raw JSON
// of the result line, because the MCP SDK infers the tool's output
// schema from this type, and raw JSON would read as an array of bytes.
type Denial struct {
	ToolName  string         `json:"tool_name"`
	Command   string         `json:"command,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

func (s *Server) addTaskTool() {
	add(s, "task", taskDescription, func(ctx context.Context, req *mcp.CallToolRequest, p TaskParams) (*mcp.CallToolResult, TaskResult, error) {
		if p.Task == "" {
			return nil, TaskResult{}, errors.New("the task is empty: say what ralph should do")
		}
		if p.MaxTurns < 0 {
			return nil, TaskResult{}, errors.New("max_turns must not be negative")
		}
		dir, err := s.dir(p.Dir)
		if err != nil {
			return nil, TaskResult{}, err
		}
		args := []string{"--output-format", "stream-json"}
		if p.SessionID != "" {
			args = append(args, "--session", p.SessionID)
		}
		if p.Model != "" {
			args = append(args, "--model", p.Model)
		}
		if p.MaxTurns > 0 {
			args = append(args, "--max-turns", strconv.Itoa(p.MaxTurns))
		}
		// After "--" the task is words, even one that looks like a flag
		// or a command's name.
		o, err := s.ralphLines(ctx, dir, progress(ctx, req), append(args, "--", p.Task)...)
		if err != nil {
			return nil, TaskResult{}, err
		}
		res, ok := readStream(o.stdout)
		if !ok {
			return nil, TaskResult{}, errors.New(o.sentence())
		}
		res.ExitCode = o.code
		var r *mcp.CallToolResult
		if res.IsError {
			// The result object is still the content: the caller
			// reads why in it, and the session to continue.
			b, _ := json.Marshal(res)
			r = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
		}
		return r, res, nil
	})
}

// progress sends the client, when it asked for progress, one
// notification per event of the task as ralph's faces word it (a tool
// call, a file changed, a task done), so that it sees ralph work and a
// client that restarts its timeout on progress does not give up on a
// long task.
func progress(ctx context.Context, req *mcp.CallToolRequest) func([]byte) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	n := 0
	return func(line []byte) {
		var ev event.Event
		// The init and result lines are not events: the call's answer
		// says what they do.
		if json.Unmarshal(line, &ev) != nil || ev.Type == "init" || ev.Type == event.RunResult {
			return
		}
		l, ok := eventwords.EventLine(ev)
		if !ok || l.Text == "" {
			return
		}
		n++
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: l.String()})
	}
}

// readStream reads a one-shot's stream-json output: the files of its
// files_changed events and its result line, read as the one-shot writes
// it (contract.ResultLine).
func readStream(out []byte) (TaskResult, bool) {
	var res TaskResult
	found := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		// The type first: an event line may carry members of the result
		// line's names in shapes of its own.
		var line struct {
			Type  string `json:"type"`
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Type {
		case "files_changed":
			for _, f := range line.Files {
				if !slices.Contains(res.FilesChanged, f.Path) {
					res.FilesChanged = append(res.FilesChanged, f.Path)
				}
			}
		case "result":
			var r contract.ResultLine
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			found = true
			res.Answer, res.IsError, res.Subtype, res.SessionID = r.Result, r.IsError, r.Subtype, r.SessionID
			res.NumTurns, res.DurationMS, res.CostUSD = r.NumTurns, r.DurationMS, r.TotalCostUSD
			res.PermissionDenials, res.Error = denials(r.PermissionDenials), r.Error
		}
	}
	if res.FilesChanged == nil {
		res.FilesChanged = []string{}
	}
	return res, found
}

// denials are the result line's refused calls as the task tool returns
// them, their arguments an object (nil when the line has none, so that
// the member is left out as before).
func denials(in []contract.Denial) []Denial {
	if in == nil {
		return nil
	}
	out := make([]Denial, 0, len(in))
	for _, d := range in {
		td := Denial{ToolName: d.ToolName, Command: d.Command}
		if len(d.Arguments) > 0 {
			// Arguments the object cannot hold are left out, as a line
			// whose arguments were no object was before.
			_ = json.Unmarshal(d.Arguments, &td.Arguments)
		}
		out = append(out, td)
	}
	return out
}
