package slash

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/mcp"
)

// runMCP is /mcp: the MCP servers, their state and tools, as ralph mcp
// list shows them, without starting any.
func runMCP(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.MCP == nil {
		return Outcome{}, fmt.Errorf("/mcp: MCP servers are %w here; `ralph mcp list` shows them", ErrNotAvailable)
	}
	h.printf("%s", MCPText(h.MCP(), h.Root, false))
	return Outcome{}, nil
}

// MCPText lists MCP servers for a person: one line per server (name,
// state, what it runs, where it is defined), then its tools. Everything a
// server or a repository wrote is stripped of terminal controls. listing
// says the servers were started just to list them.
func MCPText(st []mcp.Status, root string, listing bool) string {
	if len(st) == 0 {
		return "no MCP servers are configured; add one with `ralph mcp add NAME -- CMD ARGS…` or `ralph mcp add NAME --url URL`\n"
	}
	var b strings.Builder
	for _, s := range st {
		state := s.State
		if s.State == mcp.StateIdle && !listing {
			state += " (starts when the model first needs tools)"
		}
		if s.State == mcp.StateReady || s.State == mcp.StateCrashed || s.State == mcp.StateStopped {
			state += ", " + text.Counted(len(s.Tools), "tool", "tools")
		}
		src := s.Source
		if r, err := filepath.Rel(root, src); err == nil && !strings.HasPrefix(r, "..") {
			src = r
		}
		if s.Plugin != "" {
			src = "plugin " + s.Plugin + ": " + src
		}
		fmt.Fprintf(&b, "%s — %s — %s: %s (%s)\n", clean(s.Name), state, s.Transport, clean(text.ClipRunes(s.Runs, 100, "…")), clean(src))
		if s.Error != "" && s.State != mcp.StateReady {
			fmt.Fprintf(&b, "  %s\n", clean(text.ClipRunes(s.Error, 300, "…")))
		}
		for _, t := range s.Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(&b, "  %s  %s\n", t.Name, clean(text.ClipRunes(desc, 80, "…")))
		}
	}
	return b.String()
}

func clean(s string) string { return text.StripControls(s) }
