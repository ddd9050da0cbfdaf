package tools

import (
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// maxNoteCommand is how much of a command line the note of the running
// background commands quotes.
const maxNoteCommand = 80

// BackgroundNote is what the model is told, in the turn (never in the
// system prompt, which stays byte-stable for caching), of the background
// commands it started: those still running, and those that ended whose
// end it has not read. "" when there are none.
func (t *Toolset) BackgroundNote() string {
	cmds := t.ws.Background()
	if len(cmds) == 0 {
		return ""
	}
	var parts []string
	for _, c := range cmds {
		cmd := "`" + text.ClipWidth(text.OneLine(text.StripControls(c.Command)), maxNoteCommand) + "`"
		if c.Dir != "" {
			cmd += " in " + text.StripControls(c.Dir)
		}
		switch {
		case !c.Ended:
			parts = append(parts, fmt.Sprintf("%s %s (running for %s)", c.ID, cmd, time.Since(c.Started).Truncate(time.Second)))
		case c.Status == "":
			parts = append(parts, fmt.Sprintf("%s %s (ended: exit status 0, output not read yet)", c.ID, cmd))
		default:
			parts = append(parts, fmt.Sprintf("%s %s (ended: %s, output not read yet)", c.ID, cmd, text.OneLine(c.Status)))
		}
	}
	return fmt.Sprintf("[ralph: background %s: %s; read with command_output, stop with stop_command]",
		text.Plural(len(cmds), "command", "commands"), strings.Join(parts, "; "))
}

// StopBackground kills every background command (a hard stop, a cleared
// conversation) and reports how many were running.
func (t *Toolset) StopBackground() int { return t.ws.StopBackground() }

// StopBackgroundOf kills the background commands the agent started (its
// task attempt ended) and reports how many were running.
func (t *Toolset) StopBackgroundOf(agent string) int { return t.ws.StopBackgroundOf(agent) }

// StopBackgroundOf is the base's (Toolset.StopBackgroundOf).
func (v *View) StopBackgroundOf(agent string) int { return v.base.StopBackgroundOf(agent) }

// BackgroundNote is the base's (Toolset.BackgroundNote).
func (v *View) BackgroundNote() string { return v.base.BackgroundNote() }

// StopBackground is the base's (Toolset.StopBackground).
func (v *View) StopBackground() int { return v.base.StopBackground() }
