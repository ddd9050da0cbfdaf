package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Claude Code's Agent SDK starts its executable with the flags of its
// options (query()'s options.maxTurns is --max-turns, and so on). Those
// with a meaning in ralph are ralph's flags, under Claude Code's name
// where it differs (conventions.go, addSDKFlags); the rest are
// refused in one sentence naming the SDK's option, rather than pflag's
// bare "unknown flag", so whoever points the SDK at ralph learns which
// option to leave out.

// sdkOnlyFlags are Claude Code's flags the SDK may pass that ralph has
// no meaning for: each with the SDK option that gives it and what to do
// instead.
var sdkOnlyFlags = map[string][2]string{
	"include-partial-messages":       {"includePartialMessages", "ralph's claude shape prints each block whole, never its deltas"},
	"thinking":                       {"thinking", "thinking is off unless --thinking-tokens N gives it a budget (thinking: {type: 'enabled', budgetTokens: N})"},
	"effort":                         {"effort", "ralph asks the model at its default effort"},
	"max-budget-usd":                 {"maxBudgetUsd", "a one-shot has no budget; ralph run's is budget_usd in the config"},
	"task-budget":                    {"taskBudget", "a one-shot has no budget; ralph run's is budget_usd in the config"},
	"betas":                          {"betas", "ralph sends no Anthropic beta headers of Claude Code's"},
	"debug":                          {"debug", "ralph logs a session's events in its own record (ralph logs)"},
	"debug-file":                     {"debugFile", "ralph logs a session's events in its own record (ralph logs)"},
	"permission-prompt-tool":         {"canUseTool or permissionPromptToolName", "ralph asks no callback: allowedTools, disallowedTools and permissionMode set what runs"},
	"permission-prompts":             {"permissionPrompts", "ralph asks no callback: allowedTools, disallowedTools and permissionMode set what runs"},
	"tools":                          {"tools", "ralph offers its own tools; disallowedTools takes some away"},
	"mcp-config":                     {"mcpServers", "ralph's MCP servers are those `ralph mcp add` configured"},
	"strict-mcp-config":              {"strictMcpConfig", "ralph's MCP servers are those `ralph mcp add` configured"},
	"setting-sources":                {"settingSources", "ralph reads its own configuration and the project's CLAUDE.md and .claude/ as it always does"},
	"include-hook-events":            {"includeHookEvents", "ralph's claude shape prints no hook events"},
	"session-id":                     {"sessionId", "ralph names its sessions itself; resume continues one"},
	"no-session-persistence":         {"persistSession: false", "ralph records every session (ralph gc removes old ones)"},
	"resume-session-at":              {"resumeSessionAt", "ralph continues a session from its end"},
	"resume-drops-turn":              {"resumeDropsTurn", "ralph continues a session from its end"},
	"plugin-dir":                     {"plugins", "ralph's plugins are those `ralph plugin` installed"},
	"plugin-dir-no-mcp":              {"plugins", "ralph's plugins are those `ralph plugin` installed"},
	"channels":                       {"channels", "ralph has no channels"},
	"await-initialize":               {"the options sent with the initialize request", "ralph takes its settings from flags and its configuration"},
	"initialize-fields":              {"the options sent with the initialize request", "ralph takes its settings from flags and its configuration"},
	"managed-settings":               {"managedSettings", "ralph takes its settings from flags and its configuration"},
	"managed-settings-in-initialize": {"managedSettings", "ralph takes its settings from flags and its configuration"},
	"session-mirror":                 {"sessionMirror", "ralph records its sessions in the project's .ralph/"},
	"project-config-root":            {"projectConfigRoot", "ralph's project is the directory it runs in (cwd) or -C's"},
	"thinking-display":               {"thinking", "ralph's claude shape prints a thinking model's reasoning whole"},
}

// sdkOnlyFlag is the sentence refusing Claude Code's flag name, or ""
// when it is none of those ralph refuses.
func sdkOnlyFlag(name string) string {
	r, ok := sdkOnlyFlags[name]
	if !ok {
		return ""
	}
	return fmt.Sprintf("--%s is Claude Code's (the Agent SDK's %s option), which ralph does not take: %s", name, r[0], r[1])
}

// shapeFlags are the one-shot's flags of Claude Code's stream-json.
type shapeFlags struct {
	// streamShape and inputFormat are --stream-shape and --input-format
	// (claudeshape.go, claudeinput.go).
	streamShape, inputFormat string
	// allowSkip is --allow-dangerously-skip-permissions, which changes
	// nothing.
	allowSkip bool
}

// addSDKFlags adds the one-shot's flags of Claude Code's
// stream-json, and those the Agent SDK passes that have a meaning in
// ralph under another name, kept out of the help, which names ralph's
// own.
func (c *cli) addSDKFlags(root *cobra.Command) {
	cf := &c.f.shape
	root.Flags().StringVar(&cf.streamShape, "stream-shape", ShapeRalph, "the lines of --output-format stream-json: ralph (its events, docs/events.md) or claude (those of claude -p --output-format stream-json --verbose)")
	root.Flags().StringVar(&cf.inputFormat, "input-format", InputText, "text (the task as an argument) or stream-json (Claude Code's user messages on standard input, a turn each; with --stream-shape claude)")
	pf := root.PersistentFlags()
	pf.IntVar(&c.f.thinkingTokens, "max-thinking-tokens", 0, "--thinking-tokens (Claude Code's spelling)")
	_ = pf.MarkHidden("max-thinking-tokens")
	// The SDK's allowDangerouslySkipPermissions only lets a session
	// switch to bypassPermissions later; ralph needs no such leave, so it
	// changes nothing.
	root.Flags().BoolVar(&cf.allowSkip, "allow-dangerously-skip-permissions", false, "lets --permission-mode bypassPermissions be chosen (Claude Code's; ralph needs no leave for it)")
	_ = root.Flags().MarkHidden("allow-dangerously-skip-permissions")
}

// shapeCompletions are the values of the claude shape's flags, for the
// shell's completion (complete.go).
func shapeCompletions() map[string]cobra.CompletionFunc {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	return map[string]cobra.CompletionFunc{
		"stream-shape": fixed(ShapeRalph+"\tralph's events (docs/events.md)", ShapeClaude+"\tthe lines of claude -p --output-format stream-json"),
		"input-format": fixed(InputText+"\tthe task as an argument", InputStreamJSON+"\tClaude Code's user messages on standard input"),
	}
}
