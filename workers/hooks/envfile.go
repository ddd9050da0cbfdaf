package hooks

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/text"
)

// EnvFile is the session's CLAUDE_ENV_FILE, as Claude Code hands it to
// SessionStart hooks: a file the hooks write `export NAME=value` lines
// to, for the session's later commands. ralph never sources it: it reads
// the assignments with the shell parser (childenv.ParseEnvFile) and adds
// them to the sandbox's layer of the commands' environment (Session),
// through the one credential rule, so a hook cannot hand a later command
// a token, nor move ralph's own endpoint (ANTHROPIC_BASE_URL is withheld,
// and ralph's provider never reads the Session).
type EnvFile struct {
	// Make makes a new, empty file for one firing of SessionStart in a
	// directory the session's hooks may write (workers.Workspace.NewEnvFile).
	Make func() (string, error)
	// Take reads the file and removes it (workers.TakeEnvFile).
	Take func(path string) ([]byte, error)
	// Session receives the assignments.
	Session *childenv.Session
	// Base is the commands' environment, against which $PATH and $HOME
	// in the file expand.
	Base []string

	mu   sync.Mutex
	path string
	err  error
}

// envFor is what h's environment gains: CLAUDE_ENV_FILE for a
// SessionStart hook, made at the first one of each firing; nothing for
// every other event, as in Claude Code.
func (e *EnvFile) envFor(h Hook) []string {
	if e == nil || h.Event != SessionStart || e.Make == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.path == "" && e.err == nil {
		e.path, e.err = e.Make()
	}
	if e.path == "" {
		return nil
	}
	return []string{"CLAUDE_ENV_FILE=" + e.path}
}

// Collect reads what the SessionStart hooks of the firing that just ended
// wrote, adds it to the Session and removes the file, so that the next
// firing (after a clear or a compaction) starts from an empty one. It
// returns the sentence the person is told, or "" when there is nothing
// to tell: the variables withheld, by name, and what was not read.
func (e *EnvFile) Collect() string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	path, makeErr := e.path, e.err
	e.path, e.err = "", nil
	e.mu.Unlock()
	if makeErr != nil {
		return fmt.Sprintf("SessionStart hooks got no CLAUDE_ENV_FILE: %v", makeErr)
	}
	if path == "" {
		return ""
	}
	data, err := e.Take(path)
	if err != nil {
		return fmt.Sprintf("ralph did not read the SessionStart hooks' CLAUDE_ENV_FILE: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return ""
	}
	base := e.Session.Apply(e.Base, true)
	set, ignored, err := childenv.ParseEnvFile(data, base)
	if err != nil {
		return fmt.Sprintf("ralph did not read the SessionStart hooks' CLAUDE_ENV_FILE: %v", err)
	}
	var withheld []string
	for _, a := range set {
		if !e.Session.Set(childenv.SandboxLayer, a.Name, a.Value) {
			withheld = append(withheld, a.Name)
		}
	}
	return EnvFileNote(withheld, ignored)
}

// EnvFileNote is the one sentence that tells the person what of a
// CLAUDE_ENV_FILE the commands go without: the variables withheld as
// credentials or provider settings, by name, and the count of lines that
// were no assignment ralph could read without running anything.
func EnvFileNote(withheld []string, ignored int) string {
	var parts []string
	if len(withheld) > 0 {
		parts = append(parts, fmt.Sprintf("withheld %s from commands, as %s like %s or a provider setting (docs/hooks.md)",
			strings.Join(withheld, ", "), text.Plural(len(withheld), "it looks", "they look"), text.Plural(len(withheld), "a credential", "credentials")))
	}
	if ignored > 0 {
		parts = append(parts, fmt.Sprintf("left out %s that %s no plain assignment (ralph reads `export NAME=value` lines without running them)",
			text.Counted(ignored, "statement", "statements"), text.Plural(ignored, "is", "are")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "of the SessionStart hooks' CLAUDE_ENV_FILE, ralph " + strings.Join(parts, " and ")
}

// CollectEnv is the main Set's EnvFile.Collect: called once each firing
// of SessionStart has ended.
func (s *Set) CollectEnv() string {
	if s == nil || s.Runner == nil {
		return ""
	}
	return s.Runner.EnvFile.Collect()
}
