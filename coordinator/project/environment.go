package project

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The session's environment as the model is told it, once, in the system
// prompt: the sandbox mode, the network, the approval policy, the OS and
// the shell, as codex states them in its environment context, so a model
// does not spend turns discovering what it may not do. The system prompt
// is written at the session's start and never rewritten (its prefix stays
// byte-identical, which prompt caching depends on); a session continued
// with other settings is told what changed in its next user turn
// (changedNote).

const (
	envOpen  = "<environment>"
	envClose = "</environment>"
)

// environment is the block the system prompt states the session's
// settings in.
func (p *Project) environment() string {
	var b strings.Builder
	b.WriteString(envOpen + "\n")
	mode := tools.Mode{Sandbox: sandbox.WorkspaceWrite, Network: true}
	shell := "bash"
	if p.Tools != nil {
		mode, shell = p.Tools.Mode(), p.Tools.Shell()
	}
	fmt.Fprintf(&b, "sandbox: %s\n", sandboxSentence(mode.Sandbox))
	if mode.Network {
		b.WriteString("network: on: commands may reach the network\n")
	} else {
		b.WriteString("network: off (--no-network): commands cannot reach the network, and no tool that needs it is offered\n")
	}
	approval := "ask: a command no allowed rule covers waits for the user's approval"
	if p.Approval != nil {
		approval = p.Approval.Describe()
	}
	fmt.Fprintf(&b, "approval policy: %s\n", approval)
	fmt.Fprintf(&b, "os: %s\n", runtime.GOOS)
	fmt.Fprintf(&b, "shell: %s\n", shell)
	b.WriteString(envClose)
	return b.String()
}

// sandboxSentence says what a sandbox mode lets the model's tools do.
func sandboxSentence(m sandbox.Mode) string {
	switch m {
	case sandbox.ReadOnly:
		return "read-only: commands may read files but write none, and no tool that writes files (write_file, edit_file, apply_patch) is offered; " +
			"ralph's own records (complete_task, record_decision, remember) still work"
	case sandbox.FullAccess:
		return "danger-full-access: commands run unconfined"
	default:
		return "workspace-write: commands may write inside the project (and the directories the user added), not elsewhere"
	}
}

// changedNote tells a continued session what its settings are now when
// they differ from those its system prompt stated: the system prompt
// stays as it was, so the model reads the change in its next user turn.
// "" when nothing changed or the old prompt stated no settings.
func (p *Project) changedNote(system string) string {
	was, ok := environmentIn(system)
	if !ok {
		return ""
	}
	now := p.environment()
	if was == now {
		return ""
	}
	var changed []string
	old := map[string]string{}
	for _, line := range strings.Split(was, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			old[k] = v
		}
	}
	for _, line := range strings.Split(now, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && old[k] != v {
			changed = append(changed, fmt.Sprintf("%s is now %s (it was %s)", k, v, orUnstated(old[k])))
		}
	}
	return "[ralph: the session continues with other settings, which hold from now on in place of those the system prompt states: " +
		strings.Join(changed, "; ") + "]\n" + now
}

func orUnstated(s string) string {
	if s == "" {
		return "not stated"
	}
	return s
}

// environmentIn is the environment block a system prompt states.
func environmentIn(system string) (string, bool) {
	i := strings.Index(system, envOpen+"\n")
	if i < 0 {
		return "", false
	}
	j := strings.Index(system[i:], envClose)
	if j < 0 {
		return "", false
	}
	return system[i : i+j+len(envClose)], true
}
