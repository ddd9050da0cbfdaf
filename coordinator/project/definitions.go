package project

import (
	"fmt"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/tools"
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
	p.Definitions = agentdefs.Load(p.Door, p.Fs, p.Root, home, extra...)
	p.Definitions.ResolveAliases(func(alias string) (string, bool) { return providers.ModelForAlias(p.Config.Provider, alias) })
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

// ErrNoDefinition is --agent def:NAME naming no definition the project
// or the person has: bad input (exit 2, as ErrUsage).
var ErrNoDefinition = agentdefs.ErrUnknown

// noDefinition is ErrNoDefinition said for --agent.
type noDefinition struct {
	name string
	err  error
}

func (e noDefinition) Error() string {
	// --agent takes an external CLI's name too, so a typo of one (cluade)
	// is said with the CLIs beside the definitions.
	return fmt.Sprintf("--agent: unknown agent %q; use %s, or an agent definition's name (%v)", e.name, agents.Choices(), e.err)
}

func (e noDefinition) Unwrap() error { return e.err }

func (e noDefinition) Is(target error) bool { return target == ErrUsage }

// chooseDefinition settles --agent def:NAME of a conversation: the
// definition the main agent follows from then on.
func (p *Project) chooseDefinition(name string) error {
	if name == "" {
		return nil
	}
	d, err := p.definition(name)
	if err != nil {
		return err
	}
	p.mainDef = &d
	return nil
}

// withDefinition is the main coordinator's options as the agent
// definition chosen with --agent def:NAME makes them: its tools narrowed
// to the definition's list, its model, its prompt after ralph's, its
// hooks after the session's.
func (p *Project) withDefinition(opts *coordinator.Options) {
	if p.mainDef == nil {
		return
	}
	offered, model, prompt, err := coordinator.ApplyDefinition(*p.mainDef, opts.Tools, opts.ModelName)
	if err != nil {
		// A main agent's tools are a view, which narrows; were they not,
		// none is offered rather than every one.
		offered = p.Tools.For(tools.RoleMain).Only([]string{})
	}
	opts.Tools, opts.ModelName, opts.System = offered, model, opts.System+prompt
	opts.NoWebSearch = !coordinator.DefinitionSearches(*p.mainDef)
	if note := coordinator.NoSearchNote(*p.mainDef, opts.WebSearchOff); note != "" {
		p.notify(note)
	}
	// Its front matter's hooks run for the main agent too, after the
	// session's, as they run for a child that follows it (sessionhooks.AgentSets:
	// the same approval, sandbox and runner).
	session := opts.Hooks
	opts.Hooks = p.agentHooks.For(*p.mainDef, session)
	if opts.Hooks != session {
		// Its end is the session's Stop, not a subagent's.
		opts.Hooks.EndsAsMain()
	}
}

// isDefinition reports whether an --agent value names an agent
// definition (def:NAME) rather than an external CLI.
func isDefinition(spec string) bool {
	_, ok, _ := agentdefs.ParseSpec(spec)
	return ok
}

// checkDefinition checks that ralph run --agent def:NAME names a
// definition the project or the person has.
func (p *Project) checkDefinition(run *memory.RunConfig) error {
	if run == nil {
		return nil
	}
	name, ok, err := agentdefs.ParseSpec(run.Agent)
	if !ok || err != nil {
		return err
	}
	_, err = p.definition(name)
	return err
}

// definition is the session's agent definition called name, or
// ErrNoDefinition in one sentence.
func (p *Project) definition(name string) (agentdefs.Def, error) {
	d, err := p.Definitions.Find(name)
	if err != nil {
		return d, noDefinition{name: name, err: err}
	}
	return d, nil
}

// Definition is the session's agent definition called name, for ralph
// run --agent def:NAME.
func (p *Project) Definition(name string) (agentdefs.Def, error) { return p.definition(name) }

// webSearchOff is why the session offers no web_search, in one sentence
// (coordinator.Options.WebSearchOff); "" when it offers it.
func webSearchOff(cfg config.Config) string {
	if !cfg.WebSearch {
		return "web_search is off in this session (--web-search, or web_search = true in the config, offers the provider's own search, billed per search)"
	}
	return models.WebSearchNote(cfg)
}
