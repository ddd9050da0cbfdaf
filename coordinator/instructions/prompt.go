package instructions

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// SystemPromptVersion names the words of system_prompt.md. It is raised
// with them (the file's first line names it, which a test checks), so a
// change of the words that every session sends is a deliberate step.
const SystemPromptVersion = 3

// systemPrompt is ralph's own part of the system prompt, one file so that
// its words are read and reviewed as text.
//
//go:embed system_prompt.md
var systemPromptText string

// gptPromptText is the system prompt's own part for the models trained
// on codex's tools (OpenAI's GPT-5 family, o-series and codex models),
// written for those tools and the habits OpenAI's guide for them asks for.
//
//go:embed system_prompt_gpt.md
var gptPromptText string

// The templates are parsed at their first use, not at every start of
// ralph (--version, ralph status) that never builds a prompt.
var (
	systemPromptTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("system").Option("missingkey=error").Parse(systemPromptText))
	})
	gptPromptTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("gpt").Option("missingkey=error").Parse(gptPromptText))
	})
)

// promptTemplate is the template of the system prompt for a family's
// models.
func promptTemplate(fam providers.ToolFamily) *template.Template {
	if fam.Patches() {
		return gptPromptTemplate()
	}
	return systemPromptTemplate()
}

// Facts are what system_prompt.md (and system_prompt_gpt.md) is
// filled with.
type Facts struct {
	Root, Tools, Learnings, Added, Where, Today, Environment string
	// Todo is the todo list tool's name when the coordinator has one.
	Todo string
	// Patch is how a codex family applies a patch: "tool" (apply_patch
	// is a tool of its own) or "shell" (run through its shell tool).
	Patch string
	// Escalate is how a codex family's command asks to leave the
	// sandbox, "" where its command tool cannot.
	Escalate string
}

// Prompt is ralph's own part of the system prompt for a model of family
// fam offered the tools offered (nil: none yet), filled with f; what f
// says of the tools (Tools, Todo, Patch, Escalate) is read from offered.
func Prompt(fam providers.ToolFamily, offered []tools.ToolDef, f Facts) string {
	f.Tools, f.Todo, f.Patch, f.Escalate = fileTools(offered), todoTool(offered), patchWay(offered), escalation(offered)
	var b strings.Builder
	if err := promptTemplate(fam).Execute(&b, f); err != nil {
		// The template is ralph's own, checked by its tests.
		panic(fmt.Sprintf("system prompt: %v", err))
	}
	return b.String()
}

// todoTool is the name under which the coordinator is offered its todo
// list tool (update_plan, Claude's TodoWrite), or "" when it has none.
func todoTool(offered []tools.ToolDef) string {
	for _, d := range offered {
		if tools.ByPeerName(d.Name) == tools.ToolUpdatePlan {
			return d.Name
		}
	}
	return ""
}

// fileTools names the file tools and the command tool the coordinator
// is offered (read-only offers none that writes), as its family names
// them.
func fileTools(offered []tools.ToolDef) string {
	if offered == nil {
		return "the tools you are given"
	}
	return tools.FileTools(offered)
}

// patchWay is how the model applies a patch: "tool" when apply_patch is
// offered, "shell" otherwise (codex's GPT-5 runs it through its shell).
func patchWay(offered []tools.ToolDef) string {
	for _, d := range offered {
		if d.Name == tools.ToolApplyPatch {
			return "tool"
		}
	}
	return "shell"
}

// escalation is how the offered command tool asks to leave the sandbox,
// "" where it has no way to (the Responses API's built-in local_shell).
func escalation(offered []tools.ToolDef) string {
	for _, d := range offered {
		if tools.ByPeerName(d.Name) == tools.ToolRunCommand && strings.Contains(string(d.Parameters), `"sandbox_permissions"`) {
			return `sandbox_permissions "require_escalated" with a one-sentence justification`
		}
	}
	return ""
}
