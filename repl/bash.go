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
		out = strings.TrimRight(text.StripControls(out), "\n")
		switch {
		case out == "" && failed:
			return jobResult{err: errors.New("the command failed with no output")}
		case out == "":
			out = "(no output)"
		}
		// As the command printed it, not as markdown: a command's
		// output is no answer to render.
		s.scr.block(s.scr.pal.Dim(out))
		return jobResult{}
	})
	if errors.Is(err, errNoRoom) {
		return false
	}
	if err != nil {
		s.refused(err)
	}
	return true
}
