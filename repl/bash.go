package repl

import (
	"context"
	"errors"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// bash runs `!command` typed at the idle prompt, as Claude Code's bash
// mode does: the command runs at once (Options.Bash: through the tool
// door, its hooks and the sandbox, approved by the person's typing it),
// its output is shown, and the command with its output is what the
// model reads before the next message. It reports false when ralph is
// working, where `!` marks an urgent message instead.
func (s *Shell) bash(command string) bool {
	if s.opts.Bash == nil {
		return false
	}
	err := s.startJob("", func(ctx context.Context) jobResult {
		out, failed := s.opts.Bash(ctx, command)
		r := jobResult{text: bashBlock(command, out)}
		if failed && strings.TrimSpace(out) == "" {
			r.err = errors.New("the command failed with no output")
		}
		return r
	})
	if errors.Is(err, errNoRoom) {
		return false
	}
	if err != nil {
		s.refused(err)
	}
	return true
}

// bashBlock is the command and its output as markdown: the output in a
// fenced block longer than any run of backticks in it, with the control
// sequences a command may print taken out.
func bashBlock(command, out string) string {
	out = strings.TrimRight(text.StripControls(out), "\n")
	fence := "```"
	for strings.Contains(out, fence) {
		fence += "`"
	}
	if out == "" {
		out = "(no output)"
	}
	return "`! " + strings.ReplaceAll(text.OneLine(text.StripControls(command)), "`", "'") + "`\n\n" + fence + "\n" + out + "\n" + fence + "\n"
}
