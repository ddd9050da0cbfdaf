// Package eventwords is the one way ralph turns what happened into words:
// an event as a line (EventLine), what an agent is doing (Activity), a
// tool call, a count, a cost, a duration, a plural, and the transcript's
// markdown of an event (Transcript). The chat shell, the one-shot
// progress on stderr, `ralph watch`, `ralph logs`, the web pages, the
// agent panel, the reports and the session's transcript.md all take their
// words from here, so that the same call reads the same wherever a person
// meets it. It sits below the faces, beside the coordinator whose events
// it words, so the recorder can write the transcript with it; the faces
// add only layout and styling (scripts/screen/view: colours on a terminal,
// classes in HTML). Which events a live face prints is decided here too
// (Feed).
package eventwords

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ToolCall says what a tool call does, in a few words: running and the
// command in backquotes, the tool's name and its path, "starting a child
// agent:" and the task, or "asking you:" and the model's question. The model wrote the arguments, so the line
// carries no terminal controls.
func ToolCall(name string, args json.RawMessage) string {
	return text.StripControls(toolCall(name, args))
}

func toolCall(name string, args json.RawMessage) string {
	var a struct {
		Command  string `json:"command"`
		Path     string `json:"path"`
		Pattern  string `json:"pattern"`
		Task     string `json:"task"`
		ID       string `json:"id"`
		Question string `json:"question"`
		// Background says a run_command starts its command beside
		// the work (background commands).
		Background bool `json:"background"`
		// Workdir is where a run_command runs, when not the root.
		Workdir string `json:"workdir"`
		URL     string `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	in := ""
	if d := strings.TrimSpace(a.Workdir); d != "" && d != "." {
		in = " in " + text.ClipWidth(fold(text.Visible(d)), 40)
	}
	switch {
	case name == tools.ToolRunCommand && a.Command != "" && a.Background:
		return "starting `" + text.ClipWidth(fold(text.Visible(a.Command)), 80) + "`" + in + " in the background"
	case name == tools.ToolRunCommand && a.Command != "":
		return "running `" + text.ClipWidth(fold(text.Visible(a.Command)), 80) + "`" + in
	case name == tools.ToolWebFetch && a.URL != "":
		return "fetching " + text.ClipWidth(fold(text.Visible(a.URL)), 80)
	case name == tools.ToolSpawnAgent:
		return "starting a child agent: " + text.ClipWidth(fold(a.Task), 60)
	case name == tools.ToolAskUser:
		return "asking you: " + text.ClipWidth(fold(a.Question), 70)
	case a.Path != "":
		return name + " " + text.ClipWidth(a.Path, 80)
	case a.Pattern != "":
		return name + " " + text.ClipWidth(a.Pattern, 60)
	case a.ID != "":
		return name + " " + a.ID
	}
	s := strings.TrimSpace(fold(string(args)))
	if s == "" || s == "{}" || s == "null" {
		return name
	}
	return name + " " + text.ClipWidth(s, 80)
}

// fold joins the lines and runs of white space of s into single spaces.
func fold(s string) string { return text.OneLine(s) }

// OneLine flattens text to a single line without terminal controls and
// cuts it at n cells, so a log line or table cell never breaks the layout
// around it.
func OneLine(s string, n int) string {
	return text.ClipWidth(fold(text.StripControls(s)), n)
}

// Count writes an integer with comma separators: token counts run to
// millions, and unseparated digits are hard to compare by eye.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Money formats a cost by the one money rule (text.Dollars); unknown is
// said in words rather than as $0, which would claim the run was free.
func Money(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return text.Dollars(*c)
}

// TokensAndCost is the one way a usage and its cost are said in a line:
// "1,200 in / 300 out, cost $0.02" (ralph status, a run's result line,
// chat's /cost), with the prompt cache's part of the input when the
// endpoint reported one: "1,200 in (1,000 read from the cache) / 300 out".
func TokensAndCost(u conversation.Usage, cost *float64) string {
	in := Count(int64(u.InputTokens)) + " in"
	switch r, w := u.CacheReadTokens, u.CacheWriteTokens; {
	case r > 0 && w > 0:
		in += fmt.Sprintf(" (%s read from the cache, %s written to it)", Count(int64(r)), Count(int64(w)))
	case r > 0:
		in += fmt.Sprintf(" (%s read from the cache)", Count(int64(r)))
	case w > 0:
		in += fmt.Sprintf(" (%s written to the cache)", Count(int64(w)))
	}
	return fmt.Sprintf("%s / %s out, cost %s", in, Count(int64(u.OutputTokens)), Money(cost))
}

// Paths names files for a line of output: all of them when they are few,
// else the first ones and how many more, so that an undo of ten thousand
// files says so in one short line rather than a line of 400 KB.
func Paths(paths []string) string {
	const shown = 10
	if len(paths) <= shown+1 {
		return OneLine(strings.Join(paths, ", "), 1<<20)
	}
	return OneLine(strings.Join(paths[:shown], ", "), 1<<20) + fmt.Sprintf(" and %s more", Count(int64(len(paths)-shown)))
}
