package slash

import (
	"context"
	"fmt"
	"strings"
)

// runPlugin is /plugin: Claude Code's words for ralph plugin, carried out
// by the very commands `ralph plugin` runs (Host.Plugin, cli.PluginLine),
// so chat takes the same arguments and says the same lines. /plugin alone
// lists the plugins.
func runPlugin(_ context.Context, h *Host, args string) (Outcome, error) {
	if h.Plugin == nil {
		return Outcome{}, fmt.Errorf("/plugin: managing plugins is %w here; `ralph plugin` does it", ErrNotAvailable)
	}
	return Outcome{}, h.Plugin(args, h.Out)
}

// pluginWords are /plugin's subcommands as Tab offers them, Claude Code's
// words first; marketplace's are its own.
var pluginWords = map[string][]string{
	"":            {"install", "uninstall", "list", "marketplace", "update", "add", "remove"},
	"marketplace": {"add", "list", "remove"},
}

// PluginCompletions are the words that may follow before ("/plugin" or
// "/plugin marketplace", spaces aside) on a /plugin line; nil when before
// is neither.
func PluginCompletions(before string) []string {
	f := strings.Fields(before)
	if len(f) == 0 || f[0] != "/plugin" {
		return nil
	}
	return pluginWords[strings.Join(f[1:], " ")]
}
