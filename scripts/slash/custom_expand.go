package slash

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ralph-dev/ralph/memory/mentions"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// What a custom command embeds besides its arguments, as Claude Code's
// commands do: a shell line !`command`, replaced by the command's output,
// and a file @path, whose text goes with the message. The shell lines
// run only as the model's commands run (Host.Command: run_command's one
// approval policy, in the sandbox), when the turn starts: a project's
// command file is text the model could have written, so what it would
// run is asked about like anything else the model wants to run, and
// refused where nobody can answer (CI, no terminal) unless -y or an
// approval rule allows it. The files are read through the project's
// door (memory/rootfs), so a mention of a link out of the project, or
// of a file outside it, embeds nothing.

// shellRef is Claude Code's embedded shell: !`command` on one line.
var shellRef = regexp.MustCompile("!`([^`\n]+)`")

// shellLines are the commands of body's shell lines, in order.
func shellLines(body string) []string {
	var out []string
	for _, m := range shellRef.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// ErrShellRefused is a custom command's shell line that was not run:
// nobody approved it, or ralph cannot run commands here. Nothing is sent.
var ErrShellRefused = errors.New("a shell line of the command was not run")

// runShellLines runs body's shell lines one by one through h.Command and
// puts each one's output in its place. A line that was not run (refused,
// unapproved) ends it with ErrShellRefused: the message would say
// something the command did not do.
func (h *Host) runShellLines(ctx context.Context, name, shown, body string) (string, error) {
	if h.Command == nil {
		return "", fmt.Errorf("/%s: %w: %s embeds shell (!`…`), which ralph runs only where its commands can be approved", name, ErrShellRefused, shown)
	}
	var err error
	out := shellRef.ReplaceAllStringFunc(body, func(m string) string {
		if err != nil {
			return m
		}
		command := shellRef.FindStringSubmatch(m)[1]
		res := h.Command(ctx, command)
		if res.IsError && strings.HasPrefix(res.Output, tools.NotRun) {
			err = fmt.Errorf("/%s: %w: !`%s` of %s (%s); nothing was sent", name, ErrShellRefused,
				text.OneLine(text.StripControls(command)), shown, text.OneLine(text.StripControls(res.Output)))
			return m
		}
		return strings.TrimRight(res.Output, "\n")
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// embedFiles adds to body the text of the project's files it mentions
// with @, as a chat line's are (mentions.Embed: read through the
// project's door, and what is not embedded said in one line).
func (h *Host) embedFiles(body string) string {
	if h.Fs == nil {
		return body
	}
	return mentions.Embed(h.Fs, h.Root, body, func(s string) { h.printf("note: %s\n", s) })
}
