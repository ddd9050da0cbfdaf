package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/tools"
)

// SystemPrompt is the coordinator's system prompt: who it is, its tools,
// and the project's markdown state so it picks up where it left off.
func (p *Project) SystemPrompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are ralph, an AI coding agent working in the project at %s.
You act through tools: %s; remember saves a lasting learning about the project to %s; complete_task marks a task of RALPH_TASKS.md done; record_decision records a significant choice and why in the session's record; ask_user asks the person a question when you cannot go on well without their answer (when nobody can answer, decide yourself and say what you assumed).
Paths are relative to the project root; you cannot touch files outside it%s.%s
Work step by step: inspect before you change, make focused edits, and verify with commands when that helps.
At a significant choice (one approach over another, a trade-off, a guess where the request is unclear) call record_decision with the decision, why, how confident you are and the alternatives you weighed.
When the task is done, answer with a short summary of what you did. Today is %s.
The session's settings, which the user chose when ralph started:
%s`, p.Root, p.fileTools(), memory.LearningsFile(p.Fs, p.Root), p.addedNote(), p.whereNote(), time.Now().Format("2006-01-02"), p.environment())
	docs, err := memory.LoadStateDocs(p.Fs, p.Root, 16<<10, 8<<10)
	if err == nil && len(docs) > 0 {
		b.WriteString("\n\nThe project's state files, as they are now:\n\n")
		b.WriteString(memory.ContextBlock(docs))
	}
	b.WriteString(p.instructions())
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

// fileTools names the file tools and run_command the session's mode
// offers the coordinator (read-only offers no write_file or edit_file).
func (p *Project) fileTools() string {
	if p.Tools == nil {
		return "the tools you are given"
	}
	return tools.FileTools(p.MainTools().Definitions())
}

// addedNote names the directories of --add-dir for the model.
func (p *Project) addedNote() string {
	if p.Tools == nil || len(p.Tools.AddedDirs()) == 0 {
		return ""
	}
	return ", except these directories the user added, which you reach by absolute path: " + strings.Join(p.Tools.AddedDirs(), ", ")
}
