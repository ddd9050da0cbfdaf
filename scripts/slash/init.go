package slash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// The instructions files /init writes or updates when the person asks
// for them (typing /init): AGENTS.md, which codex, Cursor and ralph read
// (memory.InstructionsFile, which ralph init starts only where the
// project has no instructions file), or CLAUDE.md when a project has only
// that. ralph's own learnings stay in AGENT.md, which ralph init creates.
const (
	agentsFile = memory.InstructionsFile
	otherFile  = "CLAUDE.md"
)

// initPrompt asks the model to read the tree and write the instructions
// file, as Claude Code's and codex's /init do.
const initPrompt = `Look through this repository and write %[1]s at its root: the file coding agents read first when they work here. Read before you write: list the tree, read the README, the build and dependency files, the CI configuration, a few central source files and tests.

%[1]s should hold, concisely and only what you can point to in the repository:
1. The commands to build, lint and test, including how to run a single test.
2. The layout: the main directories and what each one owns.
3. The conventions the code follows: formatting, naming, error handling, imports, how tests are written.
4. What would surprise a newcomer (generated files, required environment, things not to touch).

Carry over the important parts of any other agents' rules you find (.cursor/rules/, .cursorrules, .github/copilot-instructions.md). No generic advice. %[2]s`

// initWrite, initUpdate and initRewrite end initPrompt for a new file, an
// update of CLAUDE.md, and a rewrite of AGENTS.md the person agreed to.
const (
	initWrite   = "Write the file with the write_file tool."
	initFill    = "AGENTS.md is the starter ralph init made, and AGENT.md (ralph's own learnings file, which stays as it is) holds what ralph init detected: the languages, build and test commands. Check those facts, then write AGENTS.md over the starter with the write_file tool."
	initUpdate  = "CLAUDE.md exists and is the project's instructions file: read it first, keep what is still true, correct what is not, add what is missing, and edit CLAUDE.md in place (create no AGENTS.md)."
	initRewrite = "AGENTS.md exists: read it first, keep what is still true, and write the improved file over it."
)

// runInit is ralph init (memory.InitProject: AGENT.md from what it
// detects, AGENTS.md where the project has no instructions file, and the
// RALPH_* files, each only where missing), then the
// request to the model to write AGENTS.md from the codebase (or to update
// CLAUDE.md when only that exists). The write is the model's, through the
// write tool and its approval. An AGENTS.md already there is written over
// only after the person says yes; where nobody can be asked (a script),
// /init leaves it, and every other file, and says so.
func runInit(_ context.Context, h *Host, args string) (Outcome, error) {
	if args != "" {
		return Outcome{}, fmt.Errorf("/init takes no arguments, not %q", args)
	}
	if h.Coord == nil {
		return Outcome{}, errors.New("/init: no conversation is open")
	}
	if h.busy() {
		return Outcome{}, errors.New("/init: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	exists := func(name string) (bool, error) {
		fi, err := h.Fs.Stat(filepath.Join(h.Root, name))
		switch {
		case err == nil:
			return fi.Mode().IsRegular(), nil
		case errors.Is(err, os.ErrNotExist):
			return false, nil
		}
		return false, fmt.Errorf("/init: %w", err)
	}
	agents, err := exists(agentsFile)
	if err != nil {
		return Outcome{}, err
	}
	other, err := exists(otherFile)
	if err != nil {
		return Outcome{}, err
	}
	if agents && h.Confirm == nil {
		return Outcome{}, fmt.Errorf("/init: %s exists, and nobody can be asked here whether to write over it; it is left as it is", agentsFile)
	}
	res, err := memory.InitProject(h.Fs, h.Root, time.Now())
	if err != nil {
		return Outcome{}, fmt.Errorf("/init: %w", err)
	}
	for _, line := range res.Lines() {
		h.printf("/init: %s\n", line)
	}
	switch {
	case slices.Contains(res.Created, agentsFile):
		h.printf("/init: the model reads the codebase and fills %s in\n", agentsFile)
		return Outcome{Send: fmt.Sprintf(initPrompt, agentsFile, initFill)}, nil
	case agents:
		h.printf("/init: %s exists\n", agentsFile)
		return Outcome{Send: fmt.Sprintf(initPrompt, agentsFile, initRewrite),
			Ask: fmt.Sprintf("%s exists: have the model rewrite it from the codebase (keeping what is still true)?", agentsFile)}, nil
	case other:
		h.printf("/init: only %s exists; the model updates it\n", otherFile)
		return Outcome{Send: fmt.Sprintf(initPrompt, otherFile, initUpdate)}, nil
	}
	h.printf("/init: the model reads the codebase and writes %s\n", agentsFile)
	return Outcome{Send: fmt.Sprintf(initPrompt, agentsFile, initWrite)}, nil
}
