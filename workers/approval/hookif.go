package approval

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/pathrule"
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
	return hookIf(rule, tool, input, "")
}

// HookIfAt is HookIf for the hooks of the project at root, where a path
// condition is read as a permission rule is (memory/pathrule): Edit(src/*.ts)
// from the root, Edit(**/*.ts) at any depth, Edit(//abs) absolute.
// Without a root (HookIf), a relative condition naming a directory
// cannot be placed and runs the hook.
func HookIfAt(root string) func(rule, tool string, input map[string]any) (bool, error) {
	return func(rule, tool string, input map[string]any) (bool, error) { return hookIf(rule, tool, input, root) }
}

func hookIf(rule, tool string, input map[string]any, root string) (bool, error) {
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
		if !filepath.IsAbs(path) {
			return false, fmt.Errorf("%w: %q: the call names no absolute file", ErrHookIf, rule)
		}
		roots := []string{root}
		if root == "" {
			relative := !strings.HasPrefix(arg, "/") && !strings.HasPrefix(arg, "~/")
			rest := strings.TrimPrefix(strings.TrimPrefix(arg, "./"), "**/")
			if relative && strings.Contains(strings.TrimSuffix(rest, "/"), "/") {
				return false, fmt.Errorf("%w: %q: no project root to read it from", ErrHookIf, rule)
			}
			roots = []string{"/"}
		}
		return pathrule.Parse(arg, pathrule.Base{Roots: roots}).Matches(path), nil
	}
	return false, fmt.Errorf("%w: %q: ralph reads conditions on Bash and on file paths only", ErrHookIf, rule)
}
