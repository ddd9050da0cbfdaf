package project

import (
	"path/filepath"

	"github.com/ralph-dev/ralph/memory/mentions"
)

// WithMentions is a message (a chat line, a one-shot's prompt) with the
// files it names as @path attached, as Claude Code attaches them:
// relative to the directory the person started in, through the project's
// door and the session's (memory/kept), and what is not attached said to
// the person (mentions.Embed).
func (p *Project) WithMentions(message string) string {
	return mentions.Embed(p.Door, p.Fs, filepath.Join(p.Root, p.StartDir), message, p.notify)
}
