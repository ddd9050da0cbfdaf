package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The same policy decides the calls of MCP servers' tools (workers/mcp)
// and whether a project's MCP server may start. A tool call is asked about
// like a command, showing the server, the tool and the arguments; "always"
// remembers the tool's full name (mcp__server__tool) as a rule, in the same
// places as a command's rules (allowed_commands in .ralph/config.toml and
// the person's record); --yes approves every call; ask_before patterns such
// as "mcp__github__*" hold a call for a person whatever else says yes.

// toolRulePrefix starts the full name of every MCP tool.
const toolRulePrefix = "mcp__"

func isToolRule(r string) bool { return strings.HasPrefix(r, toolRulePrefix) }

// toolHint says how to let the MCP tool name be called here: --yes, its
// --allowed-tools rule, and, where a person could be waited for (not in
// CI), that wait, or "always" answered once in chat on this machine.
func (p *Policy) toolHint(name string) string {
	wait := p.waitWay()
	if wait == "" {
		return fmt.Sprintf("rerun ralph with --yes (-y) or --allowed-tools %s to allow it", name)
	}
	return fmt.Sprintf("rerun ralph with --yes (-y) or --allowed-tools %s to allow it, or %s, or answer \"always\" for this tool once in chat", name, wait)
}

// ApproveTool decides a call of an MCP server's tool: name is the full
// name the model called (mcp__server__tool), args the arguments as sent.
func (p *Policy) ApproveTool(ctx context.Context, server, tool, name string, args json.RawMessage) tools.Decision {
	return refusal(ctx, p.approveTool(ctx, server, tool, name, args))
}

func (p *Policy) approveTool(ctx context.Context, server, tool, name string, args json.RawMessage) tools.Decision {
	call := &MCPCall{Server: server, Tool: tool, Name: name, Args: compactJSON(args)}
	if m, ok := p.deny.commands.tool(name); ok {
		return tools.Decision{Reason: m.refusal("")}
	}
	if m, ok := p.always.tool(name); ok {
		return p.askPerson(ctx, Question{MCP: call, Why: []string{m.reason()}}, m)
	}
	if p.yes || p.toolAllowed(name) {
		return tools.Decision{Allowed: true}
	}
	if d, denied := hookDenied(ctx); denied {
		return d
	}
	asker := p.currentAsker()
	if asker == nil {
		return tools.Decision{Reason: fmt.Sprintf("calling the MCP tool %s needs approval and %s; %s", name, p.nobodyAsked(), p.toolHint(name)), Unasked: true}
	}
	q := Question{MCP: call, Remember: []string{name}}
	ans, err := p.ask(ctx, asker, func() (Question, bool) { return q, p.toolAllowed(name) }, func(ans Answer) {
		if ans.Remembers() {
			p.remember(asker, q.Remember, ans == Share)
		}
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: fmt.Sprintf("no answer to the approval question (%v)", err), Unasked: true}
	case ans.Remembers():
		return tools.Decision{Allowed: true}
	case ans == Yes:
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined("the user declined this call of "+name, ans)}
}

func (p *Policy) toolAllowed(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.rules, func(rule string) bool { return toolRuleMatches(rule, name) })
}

// toolRuleMatches reports whether an allow rule holds the MCP tool name:
// the tool's own name, or a whole server's tools as --allowed-tools
// writes them ("mcp__github__*", which ParseToolRules also makes of
// Claude Code's "mcp__github").
func toolRuleMatches(rule, name string) bool {
	if prefix, ok := strings.CutSuffix(rule, "*"); ok && isToolRule(prefix) {
		return strings.HasPrefix(name, prefix)
	}
	return rule == name
}

// ApproveServer decides whether an MCP server may start: one of the
// person's own config always may; one the project's files define only
// once the person approved it on this machine — asked here when someone
// can be asked ("always" records it), refused with how to approve it
// otherwise. --yes does not approve it: it approves what the model asks
// for, not what the repository runs.
func (p *Policy) ApproveServer(ctx context.Context, s config.MCPServer) tools.Decision {
	if ServerApproved(p.user, p.userDir, p.root, s) {
		return tools.Decision{Allowed: true}
	}
	review := ReviewServer(p.user, p.userDir, p.root, s, p.redactor)
	noun := s.Noun()
	refusal := fmt.Sprintf("%s %q is defined by the project's %s and was not approved on this machine; "+
		"approve it with `ralph mcp approve %s`", noun, s.Name, relTo(p.root, s.Source), s.Name)
	if review.Earlier {
		// Nobody may be asked, so the refusal itself says what changed:
		// the person reads it before approving again.
		refusal = fmt.Sprintf("%s %q is defined by the project's %s and was not approved on this machine as it is now: %s; "+
			"approve it again with `ralph mcp approve %s` if that is what you want to run", noun, s.Name, relTo(p.root, s.Source), review.Changed(), s.Name)
	}
	asker := p.currentAsker()
	if asker == nil {
		return tools.Decision{Reason: refusal}
	}
	q := Question{Server: &ServerStart{Name: s.Name, Source: relTo(p.root, s.Source), Runs: p.redactor.Redact(s.Runs()), HTTP: s.Transport != config.TransportStdio,
		Review: review, Noun: noun}, Remember: []string{serverEntry(s)}}
	ans, err := p.ask(ctx, asker, only(q), nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: refusal}
	case ans.Remembers():
		note := noter(asker)
		if p.fs == nil {
			note(noun+" `"+s.Name+"` approved until ralph exits", false)
		} else if err := TrustServer(p.user, p.userDir, p.root, s, p.redactor); err != nil {
			note(fmt.Sprintf("could not record the approval of %s `%s` (%v); approved until ralph exits", noun, s.Name, err), true)
		} else {
			note(noun+" `"+s.Name+"` approved on this machine", false)
		}
		return tools.Decision{Allowed: true}
	case ans == Yes:
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined("the user declined to start "+noun+" "+s.Name, ans)}
}

// relTo is path relative to root when it is inside it.
func relTo(root, path string) string {
	if r, ok := strings.CutPrefix(path, strings.TrimSuffix(root, "/")+"/"); ok {
		return r
	}
	return path
}

// compactJSON is args on one line, or as sent when it is not JSON.
func compactJSON(args json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}
