package project

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
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

// InstructionFiles are the instructions files other coding agents read
// (codex's AGENTS.md, Claude Code's CLAUDE.md), which ralph reads as the
// project's instructions too. AGENT.md, the older name of ralph's
// learnings file, is read with the state files where a project still has
// one (memory.LearningsFile).
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// Bounds of the instructions in the prompt: each file, and all of them.
const (
	maxInstructionFile = 8 << 10
	maxInstructions    = 24 << 10
)

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

// instructions are the AGENTS.md and CLAUDE.md files from the start
// directory up to the project root, nearest first, each and all of them
// bounded so a huge file cannot crowd out the conversation. A file seen
// twice (CLAUDE.md as a link to AGENTS.md) is given once.
func (p *Project) instructions() string {
	var b strings.Builder
	var seen [][]byte
	dir := p.StartDir
	for {
		for _, name := range InstructionFiles {
			rel := filepath.Join(dir, name)
			data, err := rootfs.ReadInstruction(p.Fs, filepath.Join(p.Root, rel), p.Config.InstructionLinks, maxInstructionFile+1)
			if lo := (*rootfs.LinkOutError)(nil); errors.As(err, &lo) {
				p.leftOut(rel, lo.Target)
			}
			if err != nil || len(bytes.TrimSpace(data)) == 0 || containsBytes(seen, data) {
				continue
			}
			seen = append(seen, data)
			body := text.Head(string(data), maxInstructionFile)
			if b.Len()+len(body) > maxInstructions {
				fmt.Fprintf(&b, "\n(%s and any further instructions files were left out: the instructions are bounded at %d KiB)\n", filepath.ToSlash(rel), maxInstructions>>10)
				return b.String()
			}
			fmt.Fprintf(&b, "\n--- %s ---\n%s\n", filepath.ToSlash(rel), strings.TrimRight(body, "\n"))
		}
		if dir == "." || dir == string(os.PathSeparator) {
			break
		}
		dir = filepath.Dir(dir)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\nThe project's instructions (AGENTS.md, CLAUDE.md), nearest the user's directory first; where they disagree the nearer one wins:\n" + b.String()
}

// leftOut says, once per file and process, that an instructions file is
// a link out of the project and how the person allows it.
func (p *Project) leftOut(rel, target string) {
	if _, seen := p.leftOutSaid.LoadOrStore(rel, true); seen || p.notify == nil {
		return
	}
	p.notify(fmt.Sprintf("%s is a link to %s, outside the project, and was left out of the prompt; to use it, add %q to instruction_links in %s",
		filepath.ToSlash(rel), target, target, config.UserFile("~/.config")))
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
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
