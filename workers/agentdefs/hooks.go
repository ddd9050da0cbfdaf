package agentdefs

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// A definition's front matter may hold hooks in the shape of a settings
// file's "hooks" object (event → [{matcher, hooks: [{type, command,
// timeout}]}]), written as YAML. Claude Code runs them while an agent
// follows the definition, and turns a Stop hook into SubagentStop, since
// such an agent's end is a subagent's. ralph reads them with the
// settings' own parser (hooks.Parse), so the same events, types and
// timeouts count and the same things are said when left out.

// parseHooks is the hooks of definition data (file shown, from src),
// and one sentence for each thing of them ralph does not use.
func parseHooks(data []byte, shown string, src Source) (hooks.Config, []string) {
	head, _, _, err := frontmatter.Split(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return hooks.Config{}, nil
	}
	var fm struct {
		Hooks map[string]any `yaml:"hooks"`
	}
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return hooks.Config{}, []string{fmt.Sprintf("%s: its hooks are not run: its front matter is not YAML that ralph can read as hooks (%s).", shown, text.OneLine(text.StripControls(err.Error())))}
	}
	if len(fm.Hooks) == 0 {
		return hooks.Config{}, nil
	}
	if stop, ok := fm.Hooks[string(hooks.Stop)]; ok {
		// An agent's end is a subagent's stop (Claude Code's hooks
		// reference: "Stop hooks are automatically converted to
		// SubagentStop").
		if sub, ok := fm.Hooks[string(hooks.SubagentStop)].([]any); ok {
			if more, ok := stop.([]any); ok {
				stop = append(sub, more...)
			}
		}
		fm.Hooks[string(hooks.SubagentStop)] = stop
		delete(fm.Hooks, string(hooks.Stop))
	}
	raw, err := json.Marshal(map[string]any{"hooks": fm.Hooks})
	if err != nil {
		return hooks.Config{}, []string{fmt.Sprintf("%s: its hooks are not run: %s.", shown, text.OneLine(err.Error()))}
	}
	hsrc := hooks.SourceProject
	if src == Person {
		hsrc = hooks.SourceUser
	}
	cfg, err := hooks.Parse(raw, hsrc, shown, "")
	if err != nil {
		return hooks.Config{}, []string{fmt.Sprintf("%s: its hooks are not run: %s.", shown, text.OneLine(text.StripControls(err.Error())))}
	}
	return cfg, cfg.Warnings
}
