package project

import "github.com/ralph-dev/ralph/workers/approval"

// Conventions are the command-line options people bring from Claude Code
// and codex (docs/conventions.md), each mapped onto ralph's own mechanism.
type Conventions struct {
	// StartDir is where the person started ralph ("": the working
	// directory); the model is told it when it is below the root.
	StartDir string
	// AppendSystem is --append-system-prompt: more of the system prompt.
	AppendSystem string
	// AddDirs are --add-dir: more directories to read and write.
	AddDirs []string
	// Tools are --allowed-tools and --disallowed-tools.
	Tools approval.ToolRules
	// NeverAsk refuses what no rule allows (--permission-mode dontAsk).
	NeverAsk bool
	// ForkSession continues a copy of the session resumed, under a new
	// id, and leaves the original as it was (--fork-session).
	ForkSession bool
	// Definition is --agent def:NAME of a one-shot or chat: the
	// conversation's agent follows the agent definition called NAME (its
	// prompt, tools and model); "" for ralph's own.
	Definition string
}
