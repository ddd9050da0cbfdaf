package project

import (
	"fmt"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
)

// The session's agent definitions (workers/agentdefs): read once, when
// the session opens, through the project's door and the person's door on
// ~/.claude, so the list the system prompt gives the model stays the
// same for the whole session and a definition that is a link out of its
// folder is refused, never read.

// loadDefinitions reads the definitions of the project and, on a real
// file system, the person's, plus those of plugins (extra), and tells
// the person, one sentence each, what of them ralph does not use.
func (p *Project) loadDefinitions(notify func(string), extra ...agentdefs.Dir) {
	home := ""
	if rootfs.IsReal(p.Fs) {
		home, _ = os.UserHomeDir()
	}
	p.Definitions = agentdefs.Load(p.Fs, p.Root, home, extra...)
	for _, w := range p.Definitions.Warnings {
		notify(w)
	}
}

// maxDefinitionsListed bounds the definitions the system prompt names:
// past it the model is told how many more there are.
const maxDefinitionsListed = 50

// definitionsNote is the system prompt's list of the agent definitions
// spawn_agent may name, by name and description only: their prompts
// reach the children that follow them, never this conversation.
func (p *Project) definitionsNote() string {
	defs := p.Definitions.Defs()
	if len(defs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nAgent definitions: spawn_agent with agent set to one of these names gives the child that definition's instructions, tools and model.\n")
	for i, d := range defs {
		if i == maxDefinitionsListed {
			fmt.Fprintf(&b, "- … and %d more\n", len(defs)-i)
			break
		}
		desc := text.Clip(d.Description, 300)
		if desc == "" {
			desc = "(no description)"
		}
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, desc)
	}
	return strings.TrimRight(b.String(), "\n")
}
