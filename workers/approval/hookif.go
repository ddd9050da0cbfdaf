package approval

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrHookIf is wrapped when a hook's "if" condition is not one ralph can
// evaluate: the hook then runs, since a guard skipped guards nothing.
var ErrHookIf = errors.New("hook condition not understood")

// HookIf evaluates a hook's "if" condition, in Claude Code's
// permission-rule syntax ("Bash(git commit:*)", "Edit(*.ts)", "Write"),
// against one tool call (tool is Claude Code's name of the tool). It
// reads the rule with the parser the settings' allow rules use
// (splitRule, parseWordRule), so a condition matches the calls such an
// allow rule would: a Bash condition holds when one of the line's
// simple commands is covered by it, a path condition when the call's
// file_path matches its glob.
func HookIf(rule, tool string, input map[string]any) (bool, error) {
	name, arg, err := splitRule(strings.TrimSpace(rule))
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrHookIf, err)
	}
	if name != tool {
		return false, nil
	}
	if arg == "" || arg == "*" {
		return true, nil
	}
	switch tool {
	case "Bash":
		w, err := parseWordRule(rule, arg)
		if err != nil {
			return false, fmt.Errorf("%w: %w", ErrHookIf, err)
		}
		command, _ := input["command"].(string)
		for _, c := range Analyze(command).commands {
			if w.covers(c.words) {
				return true, nil
			}
		}
		return false, nil
	case "Edit", "Write", "Read", "MultiEdit", "NotebookEdit":
		path, _ := input["file_path"].(string)
		if path == "" {
			path, _ = input["notebook_path"].(string)
		}
		if strings.Contains(arg, "**") {
			return false, fmt.Errorf("%w: %q: ralph matches no ** in a hook's condition", ErrHookIf, rule)
		}
		pattern := strings.TrimPrefix(arg, "./")
		for _, p := range []string{path, filepath.Base(path)} {
			ok, err := filepath.Match(pattern, p)
			if err != nil {
				return false, fmt.Errorf("%w: %q: %w", ErrHookIf, rule, err)
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: %q: ralph reads conditions on Bash and on file paths only", ErrHookIf, rule)
}
