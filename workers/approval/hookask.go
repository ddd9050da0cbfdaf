package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/workers/tools"
)

// ApproveAsked implements tools.HookAsker: a PreToolUse hook answered
// "ask" for a call of tool with args, giving reason. The person is asked
// as about any other call, every time and with no "always" (the hook asks
// about this call, not about a rule), and --yes does not answer for them:
// a hook that asks for a person wants one, as ask_before does. Where
// nobody can be asked the call is refused, saying why.
func (p *Policy) ApproveAsked(ctx context.Context, tool string, args json.RawMessage, reason string) tools.Decision {
	return refusal(ctx, p.approveAsked(ctx, tool, args, reason))
}

func (p *Policy) approveAsked(ctx context.Context, tool string, args json.RawMessage, reason string) tools.Decision {
	if d, denied := hookDenied(ctx); denied {
		return d
	}
	why := "a PreToolUse hook asks: " + strings.TrimSpace(reason)
	if strings.TrimSpace(reason) == "" {
		why = "a PreToolUse hook asks a person about this call"
	}
	q := askedQuestion(tool, args, why)
	asker := p.currentAsker()
	if asker == nil {
		return tools.Decision{Reason: fmt.Sprintf("%s, and %s, so it was not done", why, p.nobodyAsked()), Unasked: true}
	}
	ans, err := p.ask(ctx, asker, only(q), nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: fmt.Sprintf("no answer to the approval question (%v)", err), Unasked: true}
	case !ans.Refused():
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined("the user declined this "+tool+" call", ans)}
}

// askedQuestion is the question about a call a hook asks about, shown
// as the faces show that tool's calls: a command as a command, a file
// change as a file change, any other call with its arguments.
func askedQuestion(tool string, args json.RawMessage, why string) Question {
	var a struct {
		Command string `json:"command"`
		Workdir string `json:"workdir"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	switch {
	case tool == tools.ToolRunCommand && a.Command != "":
		// The hook asks before run_command resolves its directory: the
		// question names it as the model wrote it, cleaned.
		dir := ""
		if a.Workdir != "" {
			dir = path.Clean(filepath.ToSlash(a.Workdir))
		}
		return Question{Command: a.Command, Dir: dir, Why: []string{why}}
	case tools.Info(tool).WritesPaths && a.Path != "":
		return Question{Command: a.Path, Tool: tool, Why: []string{why}}
	}
	call := &MCPCall{Tool: tool, Name: tool, Args: compactJSON(args)}
	if server, name, ok := strings.Cut(strings.TrimPrefix(tool, toolRulePrefix), "__"); ok && isToolRule(tool) {
		call.Server, call.Tool = server, name
	}
	return Question{MCP: call, Why: []string{why}}
}
