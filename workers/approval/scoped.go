package approval

import (
	"context"
	"strings"

	"github.com/ralph-dev/ralph/workers/tools"
)

// A custom command the person wrote (in their own folders, or in a plugin
// they installed outside every project) may name Bash rules in its
// front matter's allowed-tools, as Claude Code's do: those rules allow
// the command's own shell lines and the model's matching commands while
// that command's turn runs, and nothing after it. They travel in the
// turn's context rather than in the policy, so they end with the turn
// and never reach a remembered rule or another turn. The scripts/slash
// caller decides whose the command is (a project's command is text the
// model could have written, and its allowed-tools allow nothing); this
// package only matches, word by word, with the one WordRule matcher.

type scopedKey struct{}

// WithScoped is ctx whose run_command approvals also allow what the
// allow rules of r allow (its AllowWords, and AllowCommands for any
// sandboxed command). Deny rules, ask_before and permissions.ask still
// come first, and nothing outside the sandbox is allowed by it.
func WithScoped(ctx context.Context, r ToolRules) context.Context {
	if len(r.AllowWords) == 0 && !r.AllowCommands {
		return ctx
	}
	return context.WithValue(ctx, scopedKey{}, ToolRules{AllowWords: r.AllowWords, AllowCommands: r.AllowCommands})
}

// scopedAllowed reports whether the turn's scoped rules (WithScoped),
// together with the policy's own, allow command: every simple command in
// it covered by one or the other, and nothing in it that no rule vouches
// for.
func (p *Policy) scopedAllowed(ctx context.Context, command string) bool {
	r, ok := ctx.Value(scopedKey{}).(ToolRules)
	if !ok || strings.HasPrefix(command, tools.UnsandboxedPrefix) {
		return false
	}
	if r.AllowCommands {
		return true
	}
	a := analyzeAt(command, p.at(tools.WorkdirOf(ctx)))
	if len(a.Asks) > 0 || len(a.commands) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range a.commands {
		if p.covered(c) {
			continue
		}
		covered := false
		for _, w := range r.AllowWords {
			if w.covers(c.words) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}
