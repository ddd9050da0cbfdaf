package sessionhooks

import (
	"sync"

	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// The hooks of an agent definition's front matter (workers/agentdefs)
// run while an agent follows that definition, as in Claude Code: its
// tool calls' PreToolUse and PostToolUse, its end as SubagentStop. They
// are found with the session's other hooks (Load, so `ralph hooks`
// lists them and `ralph hooks approve` approves them), run by the same
// Runner in the same sandbox, and a project's definition's wait for the
// person's approval through the one approval policy, as the project's
// settings' hooks do. The session's own hooks never include them.

// definitionsOf is the agent definitions whose hooks Load reads:
// the session's, or those of the project and the person when the caller
// (ralph hooks) has none read. A plugin's agents have no hooks, as in
// Claude Code.
func definitionsOf(src Sources) agentdefs.Set {
	if src.Definitions != nil {
		return *src.Definitions
	}
	if src.Fs == nil {
		return agentdefs.Set{}
	}
	// Only the hooks are read here (ralph hooks): nothing is sent.
	return agentdefs.Load(nil, src.Fs, src.Root, src.Home)
}

// AgentSets are the Sets of the definitions' hooks, made when an
// agent first follows a definition and kept for the session, so that a
// definition's hooks are asked about once.
type AgentSets struct {
	mu   sync.Mutex
	sets map[string]*hooks.Set
	// Make makes the Set of one definition (Builder.SetOf).
	Make func(agent string) *hooks.Set
}

// For is the hooks an agent following def runs: the session's, and the
// definition's after them; the session's alone when def has none.
func (a *AgentSets) For(def agentdefs.Def, session *hooks.Set) *hooks.Set {
	if a == nil || a.Make == nil {
		return session
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sets[def.Name]
	if !ok {
		s = a.Make(def.Name)
		if s != nil {
			s.Base = session
		}
		if a.sets == nil {
			a.sets = map[string]*hooks.Set{}
		}
		a.sets[def.Name] = s
	}
	if s == nil {
		return session
	}
	return s
}
