package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// completing reports whether args ask cobra's hidden completion command,
// which a shell's completion script runs: only it reads the completion
// functions of flags' values, and registering them (a walk over every
// command's flag sets) took 2 ms of every start-up on a busy machine,
// a one-shot's too.
func completing(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// addValueCompletions lets the shell complete the values of the flags
// that take one of a few words, a session id or a model name, on every
// command that has them (ralph run's --agent, the root's --resume, ...).
func (c *cli) addValueCompletions(root *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	byFlag := map[string]cobra.CompletionFunc{
		"sandbox": fixed(
			string(sandbox.ReadOnly)+"\tcommands change nothing",
			string(sandbox.WorkspaceWrite)+"\tcommands change the project only (the default)",
			string(sandbox.FullAccess)+"\tno sandbox"),
		"output-format":   fixed(FormatText, FormatJSON, FormatStreamJSON),
		"style":           fixed("auto", "dark", "light", "notty"),
		"permission-mode": fixed(permissionModes...),
		// exec: takes a command after it, so the shell adds no space.
		"agent":    agentCompletions,
		"reviewer": agentCompletions,
		"resume":   c.sessionCompletions,
		"session":  c.sessionCompletions,
		"model":    c.modelCompletions,
		"provider": fixed(providers.Names()...),
		// --output-schema names a JSON file; --json-schema is the JSON.
		outputSchemaFlag: cobra.FixedCompletions([]string{"json"}, cobra.ShellCompDirectiveFilterFileExt),
		jsonSchemaFlag:   cobra.NoFileCompletions,
	}
	for name, complete := range shapeCompletions() {
		byFlag[name] = complete
	}
	// --resume takes its id as the next word (resumeArgs), so the word
	// after a bare --resume completes as one.
	root.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if c.f.conv.resume == pickSession && len(args) == 0 {
			return c.sessionCompletions(cmd, args, toComplete)
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
	if exec, _, err := root.Find([]string{"exec"}); err == nil && exec != root {
		exec.ValidArgsFunction = root.ValidArgsFunction // the same one-shot
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		// NonInheritedFlags builds a new flag set at every call: once per
		// command, not once per flag.
		own := cmd.NonInheritedFlags()
		for name, fn := range byFlag {
			if own.Lookup(name) != nil {
				// A flag shared by several commands is registered once;
				// the error for the second time says only that.
				_ = cmd.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// agentCompletions are the agents --agent takes, as workers/agents names
// them.
func agentCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return append(agents.Names(), "exec:"), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// sessionCompletions are the project's sessions, newest first, each
// described by its first prompt, which is what a person remembers it by.
// Sessions opened and left without a word are left out, as the picker
// leaves them out.
func (c *cli) sessionCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const most = 50
	root, err := projectroot.Root(c.f.dir, c.f.allowHome)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	fs, err := rootfs.New(root)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ids, err := memory.ListSessions(fs, root)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for i := len(ids) - 1; i >= 0 && len(out) < most; i-- {
		if memory.SessionEmpty(fs, root, ids[i]) {
			continue
		}
		prompt := memory.FirstPrompt(fs, root, ids[i])
		out = append(out, cobra.CompletionWithDesc(ids[i], eventwords.OneLine(prompt, 60)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// modelCompletions are the models the configured endpoint serves, through
// the one resolver chat's /model uses (coordinator/models): from its
// cache file while fresh, else asked of the endpoint for at most
// models.ListTimeout.
func (c *cli) modelCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	// As a session would resolve it: --provider and --base-url pick
	// whose models.
	_, cfg, err := project.EffectiveConfig(c.f.dir, c.f.overrides())
	if err != nil {
		return nil, none
	}
	ids, err := models.ForConfig(cfg).List(context.Background())
	if err != nil {
		return nil, none
	}
	return ids, none
}
