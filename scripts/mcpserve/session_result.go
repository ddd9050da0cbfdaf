package mcpserve

import (
	"context"
	_ "embed"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/spf13/afero"
)

//go:embed session_result.md
var sessionResultDescription string

// SessionResultParams are the session_result tool's arguments.
type SessionResultParams struct {
	DirParam
	SessionID string `json:"session_id,omitempty" jsonschema:"the session's id, or a unique part of it (default: the latest session)"`
}

// SessionResult is what a session came to, read from its own records.
type SessionResult struct {
	SessionID string `json:"session_id"`
	// Status is its session.json's: running, paused, completed, failed, …
	Status string `json:"status"`
	Mode   string `json:"mode"`
	// Finished says the session recorded a result; a session still
	// running, or a task loop (which has no one answer), has none.
	Finished bool              `json:"finished"`
	Answer   string            `json:"answer"`
	IsError  bool              `json:"is_error"`
	Subtype  string            `json:"subtype,omitempty"`
	Turns    int               `json:"turns"`
	CostUSD  *float64          `json:"cost_usd"`
	Tasks    memory.TaskCounts `json:"tasks"`
	// TasksDone counts the tasks it finished; FilesChanged are the paths
	// of the files it changed (known in a git work tree only).
	TasksDone    int      `json:"tasks_done"`
	FilesChanged []string `json:"files_changed"`
	Error        string   `json:"error,omitempty"`
}

func (s *Server) addSessionResultTool() {
	add(s, "session_result", sessionResultDescription, func(_ context.Context, _ *mcp.CallToolRequest, p SessionResultParams) (*mcp.CallToolResult, SessionResult, error) {
		dir, err := s.dir(p.Dir)
		if err != nil {
			return nil, SessionResult{}, err
		}
		root, err := projectroot.Root(dir, false)
		if err != nil {
			return nil, SessionResult{}, err
		}
		door, err := rootfs.New(root)
		if err != nil {
			return nil, SessionResult{}, err
		}
		res, err := readSession(door, root, p.SessionID)
		return nil, res, err
	})
}

// readSession reads a session's result from its records: session.json,
// the facts a person is shown when it ends, and its events.
func readSession(fs afero.Fs, root, want string) (SessionResult, error) {
	id, err := memory.FindSession(fs, root, want)
	if err != nil {
		return SessionResult{}, err
	}
	st, err := memory.LoadSessionState(fs, root, id)
	if err != nil {
		return SessionResult{}, fmt.Errorf("reading session %s: %w", id, err)
	}
	facts := view.LoadSessionFacts(fs, root, id)
	res := SessionResult{SessionID: id, Status: st.Status, Mode: st.Mode, Turns: facts.Turns, CostUSD: facts.CostUSD,
		Tasks: st.Tasks, TasksDone: facts.TasksDone, FilesChanged: []string{}, Error: st.Error}
	evs, _, err := memory.ReadJSONL[event.Event](fs, memory.LogPath(root, id, memory.EventsLog))
	if err != nil {
		return res, fmt.Errorf("reading session %s's events: %w", id, err)
	}
	for _, ev := range evs {
		switch {
		case ev.Type == event.FilesChanged:
			for _, f := range ev.Files {
				if !slices.Contains(res.FilesChanged, f.Path) {
					res.FilesChanged = append(res.FilesChanged, f.Path)
				}
			}
		case ev.Type == event.RunResult && ev.Result != nil && (ev.AgentID == "" || ev.AgentID == event.MainAgent):
			res.Finished = true
			res.Answer, res.IsError, res.Subtype = ev.Result.Text, ev.Result.IsError, ev.Result.Subtype
		}
	}
	return res, nil
}
