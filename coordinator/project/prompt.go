package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/instructions"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// SystemPrompt is the coordinator's system prompt: who it is, its tools,
// how to work and report, and the project's markdown state so it picks up
// where it left off.
func (p *Project) SystemPrompt() string {
	var b strings.Builder
	b.WriteString(instructions.Prompt(p.toolFamily(), p.offeredTools(), instructions.Facts{Root: p.Root, Learnings: memory.AgentFile, Added: p.addedNote(),
		Where: p.whereNote(), Today: time.Now().Format("2006-01-02"), Environment: p.environment()}))
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

// addedNote names the directories of --add-dir for the model.
func (p *Project) addedNote() string {
	if p.Tools == nil || len(p.Tools.AddedDirs()) == 0 {
		return ""
	}
	return ", except these directories the user added, which you reach by absolute path: " + strings.Join(p.Tools.AddedDirs(), ", ")
}

// WithImages is the person's message with the pictures it names attached
// (instructions.Reader.WithImages).
func (p *Project) WithImages(message, model string) (string, []conversation.Image) {
	return p.instructions.WithImages(message, model)
}
