package mcpserve

import (
	"context"
	_ "embed"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
)

//go:embed run_start.md
var runStartDescription string

// RunStartParams are the run_start tool's arguments: which plan, and the
// limits a caller may narrow. Whatever runs a program of the caller's
// choosing (a verify command, another agent and its arguments, a prompt
// template) is left to the person's config.
type RunStartParams struct {
	DirParam
	Plan          string  `json:"plan,omitempty" jsonschema:"the plan to work (a plan file or its name, as ralph plans lists them; default: RALPH_TASKS.md)"`
	MaxIterations int     `json:"max_iterations,omitempty" jsonschema:"stop after this many task attempts (default: the person's configured limit)"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty" jsonschema:"stop when the known cost in USD reaches this"`
}

// RunStarted is what run_start returns.
type RunStarted struct {
	Dir       string `json:"dir"`
	PID       int    `json:"pid"`
	SessionID string `json:"session_id"`
	// Log is the file the run's own output goes to.
	Log string `json:"log"`
}

func (s *Server) addRunStartTool() {
	add(s, "run_start", runStartDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p RunStartParams) (*mcp.CallToolResult, RunStarted, error) {
		if p.MaxIterations < 0 || p.MaxCostUSD < 0 {
			return nil, RunStarted{}, errors.New("max_iterations and max_cost_usd must not be negative")
		}
		dir, err := s.dir(p.Dir)
		if err != nil {
			return nil, RunStarted{}, err
		}
		root, err := projectroot.Root(dir, false)
		if err != nil {
			return nil, RunStarted{}, err
		}
		var args []string
		if p.MaxIterations > 0 {
			args = append(args, "--max-iterations", strconv.Itoa(p.MaxIterations))
		}
		if p.MaxCostUSD > 0 {
			args = append(args, "--max-cost", strconv.FormatFloat(p.MaxCostUSD, 'f', -1, 64))
		}
		if p.Plan != "" {
			args = append(args, "--", p.Plan)
		}
		started, err := startRun(ctx, s.opts.Bin, dir, root, s.opts.Env, args)
		return nil, started, err
	})
}
