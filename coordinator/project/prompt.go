package project

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/ralph-dev/ralph/memory"
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

// promptFacts are what system_prompt.md (and system_prompt_gpt.md) is
// filled with.
type promptFacts struct {
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

// SystemPrompt is the coordinator's system prompt: who it is, its tools,
// how to work and report, and the project's markdown state so it picks up
// where it left off.
func (p *Project) SystemPrompt() string {
	var b strings.Builder
	fam := p.toolFamily()
	offered := p.offeredTools()
	facts := promptFacts{Root: p.Root, Tools: fileTools(offered), Learnings: memory.AgentFile, Added: p.addedNote(),
		Where: p.whereNote(), Today: time.Now().Format("2006-01-02"), Environment: p.environment(), Todo: todoTool(offered),
		Patch: patchWay(offered), Escalate: escalation(offered)}
	if err := promptTemplate(fam).Execute(&b, facts); err != nil {
		// The template is ralph's own, checked by its tests.
		panic(fmt.Sprintf("system prompt: %v", err))
	}
	docs, err := memory.LoadStateDocs(p.Door, p.Fs, p.Root, 16<<10, 8<<10)
	if err == nil && len(docs) > 0 {
		b.WriteString("\n\nThe project's state files, as they are now:\n\n")
		b.WriteString(memory.ContextBlock(docs))
	}
	b.WriteString(p.instructions.Text())
	b.WriteString(p.skillsPrompt())
	b.WriteString(p.definitionsNote())
	if p.appendSystem != "" {
		b.WriteString("\n\n" + p.appendSystem)
	}
	return b.String()
}

// startRel is the directory the person started ralph in, relative to the
// project root ("." for the root itself, or a start outside it).
func startRel(root, start string) string {
	if start == "" {
		return "."
	}
	abs, err := filepath.Abs(start)
	if err != nil {
		return "."
	}
	for _, r := range []string{root, evalOr(root)} {
		for _, s := range []string{abs, evalOr(abs)} {
			if rel, err := filepath.Rel(r, s); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return rel
			}
		}
	}
	return "."
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// whereNote tells the model where the person is when that is not the
// project root: without it, a person in a subdirectory who says "add a
// test here" gets a file at the root.
func (p *Project) whereNote() string {
	if p.StartDir == "." {
		return ""
	}
	d := filepath.ToSlash(p.StartDir)
	return fmt.Sprintf("\nThe user started ralph in the directory %s/ of the project (%s): the files and directories they mention, and \"here\", are relative to it, so write them as %s/<path> in your tool calls (a file x they ask for goes to %s/x).",
		d, filepath.Join(p.Root, p.StartDir), d, d)
}

// startDir is the start directory given, or the working directory.
func startDir(given string) string {
	if given != "" {
		return given
	}
	wd, _ := os.Getwd()
	return wd
}

// toolFamily is the tool family the session's model is offered: the
// system prompt is written for its tools.
func (p *Project) toolFamily() providers.ToolFamily {
	if p.Tools == nil {
		return providers.FamilyOf(p.Config.Model)
	}
	return p.Tools.Family(p.Config.Model)
}

// offeredTools are the coordinator's tools as the session's model is
// offered them (its family's names), nil without tools.
func (p *Project) offeredTools() []tools.ToolDef {
	if p.Tools == nil {
		return nil
	}
	defs, _ := p.Tools.Offer(p.Config.Model, p.MainTools().Definitions(), nil)
	return defs
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

// addedNote names the directories of --add-dir for the model.
func (p *Project) addedNote() string {
	if p.Tools == nil || len(p.Tools.AddedDirs()) == 0 {
		return ""
	}
	return ", except these directories the user added, which you reach by absolute path: " + strings.Join(p.Tools.AddedDirs(), ", ")
}
