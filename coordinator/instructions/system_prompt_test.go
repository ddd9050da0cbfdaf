package instructions

import (
	"fmt"
	"strings"
	"testing"
)

// The system prompt's file names its version, and says what a good agent
// is told: plan, read first, keep the person's changes, validate, report.
func TestSystemPromptFileIsVersionedAndComplete(t *testing.T) {
	t.Parallel()
	if !strings.Contains(strings.SplitN(systemPromptText, "\n", 2)[0], fmt.Sprintf("version %d.", SystemPromptVersion)) {
		t.Fatalf("system_prompt.md's first line does not name version %d", SystemPromptVersion)
	}
	facts := Facts{Root: "/p", Tools: "read_file", Learnings: "AGENTS.md", Today: "2026-11-26", Environment: "<env/>"}
	render := func(f Facts) string {
		var b strings.Builder
		if err := systemPromptTemplate().Execute(&b, f); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain := render(facts)
	for _, want := range []string{"You are ralph", "say your plan in a few lines", "Read before you change",
		"never revert, reformat or delete them", "a check that did not run is not a pass", "Keep going until the task is done",
		"what you changed and where", "Today is 2026-11-26", "<env/>"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, plain)
		}
	}
	if plain != render(facts) {
		t.Fatal("the same facts gave two prompts: the prefix cache would miss")
	}
	facts.Todo = "update_plan"
	if withTodo := render(facts); !strings.Contains(withTodo, "keep a short todo list with update_plan") {
		t.Errorf("with a todo tool the prompt does not name it:\n%s", withTodo)
	}
	if strings.Contains(plain, "{{") || strings.HasPrefix(plain, "\n") {
		t.Errorf("template text left in the prompt:\n%s", plain)
	}
}

// The codex families' prompt names its version too, says how each of
// them applies a patch, and what it must not do with the person's work.
func TestCodexPromptFileIsVersionedAndComplete(t *testing.T) {
	t.Parallel()
	if !strings.Contains(strings.SplitN(gptPromptText, "\n", 2)[0], fmt.Sprintf("version %d:", SystemPromptVersion)) {
		t.Fatalf("system_prompt_gpt.md's first line does not name version %d", SystemPromptVersion)
	}
	render := func(f Facts) string {
		var b strings.Builder
		if err := gptPromptTemplate().Execute(&b, f); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	facts := Facts{Root: "/p", Tools: "apply_patch and shell_command", Learnings: "AGENTS.md", Today: "2026-11-26", Environment: "<env/>",
		Todo: "update_plan", Patch: "tool", Escalate: `sandbox_permissions "require_escalated"`}
	tool := render(facts)
	for _, want := range []string{"You are ralph", "Edit files with the apply_patch tool", "rg --files", "never revert them",
		"a check that did not run is not a pass", "require_escalated", "Keep a plan with update_plan", "Today is 2026-11-26", "<env/>"} {
		if !strings.Contains(tool, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, tool)
		}
	}
	if strings.Contains(tool, "*** Add File") {
		t.Error("a model with the apply_patch tool is told the patch format, which its tool's grammar holds")
	}
	facts.Patch, facts.Escalate = "shell", ""
	shell := render(facts)
	for _, want := range []string{`running apply_patch through your shell tool`, `"apply_patch", "*** Begin Patch`, "*** Update File: <path>"} {
		if !strings.Contains(shell, want) {
			t.Errorf("a model that patches through its shell is not told %q:\n%s", want, shell)
		}
	}
	if strings.Contains(shell, "require_escalated") || strings.Contains(shell, "{{") || shell != render(facts) {
		t.Errorf("the prompt without a way to leave the sandbox:\n%s", shell)
	}
}
