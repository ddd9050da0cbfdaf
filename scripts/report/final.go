package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/ralph-dev/ralph/workers/tools/applypatch"
)

// FinalReportFile is the report's name inside the session directory.
const FinalReportFile = "final-report.md"

// Limits that keep a report of a very long session readable; what is left
// out is counted, never silently dropped.
const (
	goalLimit    = 600
	answerLimit  = 4000
	recordsLimit = 50
)

// Report writes final-report.md for session id: summary, tasks, metrics,
// errors and retries, interruptions and decisions, and the files the
// session wrote or edited. It is written atomically (a reader never sees
// half a report) and its text and path are returned.
func Report(fs afero.Fs, root, id string, now time.Time) (markdown string, path string, err error) {
	rec, err := Load(fs, root, id)
	if err != nil {
		return "", "", err
	}
	a, evs := rec.Analysis, rec.Events
	dir := memory.SessionDir(root, id)
	var b strings.Builder
	fmt.Fprintf(&b, "# Session report\n\nSession `%s`, written %s.\n", id, now.UTC().Format("2006-01-02 15:04 UTC"))

	st, stErr := memory.LoadSessionState(fs, root, id)
	msgs, msgErr := memory.LoadMessages(fs, dir)
	writeSummary(&b, a, st, stErr == nil, msgs, msgErr, evs)
	writeLinks(&b, fs, root, id)
	writeTasks(&b, rec.Timeline)
	writeTimeline(&b, rec.Timeline)
	writeInsights(&b, ComputeInsights(rec))
	writeMetrics(&b, a)
	writeReviews(&b, a.Reviews)
	writeErrors(&b, rec.Errors)
	writeDecisions(&b, rec.Decision, evs)
	writeFiles(&b, evs)

	markdown = b.String()
	path = filepath.Join(dir, FinalReportFile)
	if err := memory.WriteFileAtomic(fs, path, []byte(markdown), 0o644); err != nil {
		return markdown, "", err
	}
	return markdown, path, nil
}

func writeSummary(b *strings.Builder, a Analysis, st memory.State, haveState bool, msgs []conversation.Message, msgErr error, evs []event.Event) {
	b.WriteString("\n## Summary\n\n")
	fmt.Fprintf(b, "- Status: **%s**\n", a.Status)
	if a.Mode != "" {
		fmt.Fprintf(b, "- Mode: %s\n", a.Mode)
	}
	if a.Model != "" {
		fmt.Fprintf(b, "- Model: %s\n", a.Model)
	}
	if !a.StartedAt.IsZero() {
		fmt.Fprintf(b, "- Started: %s, ran for %s\n", a.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), eventwords.Duration(a.Duration()))
	}
	if haveState && st.Error != "" {
		fmt.Fprintf(b, "- Error: %s\n", oneLine(st.Error, 300))
	}
	if haveState && st.Recovered != "" {
		fmt.Fprintf(b, "- Recovered: %s\n", oneLine(st.Recovered, 300))
	}
	for _, n := range a.Notes {
		fmt.Fprintf(b, "- Note: %s\n", n)
	}
	if msgErr != nil {
		fmt.Fprintf(b, "- Note: the conversation could not be read (%v); goal and answer come from the events\n", msgErr)
	}

	goal, answer := goalAndAnswer(msgs, evs)
	b.WriteString("\n### Goal\n\n")
	b.WriteString(quote(truncate(goal, goalLimit), "(no user message recorded)"))
	b.WriteString("\n### Final answer\n\n")
	b.WriteString(quote(truncate(answer, answerLimit), "(no answer yet)"))
}

// goalAndAnswer is the person's first prompt and the last assistant text.
// The system prompt and tool traffic are skipped; the conversation stands
// in for the events where they have no prompt, and the events for the
// conversation when it is unreadable (or predates messages.jsonl).
func goalAndAnswer(msgs []conversation.Message, evs []event.Event) (goal, answer string) {
	for _, e := range evs {
		switch {
		case (e.Type == event.SessionStarted || e.Type == event.UserMessage && e.Priority == "") && goal == "" && mainAgent(e):
			// A run's prompt is its user_message (session_started's text
			// in older logs): the person's words, also where ralph
			// wrapped them in a prompt of its own (ralph plan).
			goal = e.Text
		case e.Type == event.Assistant && len(msgs) == 0 && strings.TrimSpace(e.Text) != "":
			answer = e.Text
		}
	}
	for _, m := range msgs {
		switch {
		case m.Role == conversation.RoleUser && goal == "" && strings.TrimSpace(m.Content) != "":
			goal = m.Content
		case m.Role == conversation.RoleAssistant && strings.TrimSpace(m.Content) != "":
			answer = m.Content
		}
	}
	return goal, answer
}

// quote renders text as a markdown block quote, which keeps any markdown
// inside it (code blocks, lists) while setting it apart from the report.
func quote(text, empty string) string {
	if strings.TrimSpace(text) == "" {
		return empty + "\n"
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// writeTasks lists the tasks this session worked on, from its own
// records: RALPH_TASKS.md is the project's, shared by every session, and
// today's file may hold tasks a later session added or did.
func writeTasks(b *strings.Builder, tl Timeline) {
	b.WriteString("\n## Tasks\n\n")
	if len(tl.Tasks) == 0 {
		b.WriteString("This session worked on no tasks.\n")
		return
	}
	fmt.Fprintf(b, "From this session's records: %s.\n", CountTasks(tl))
	for _, g := range []struct {
		title string
		state planfile.TaskState
	}{{"Done", planfile.TaskDone}, {"Failed", planfile.TaskFailed}, {"In progress", planfile.TaskInProgress},
		{"Open", planfile.TaskOpen}, {"Skipped", planfile.TaskSkipped}} {
		var lines []string
		for _, t := range tl.Tasks {
			if t.State == string(g.state) {
				lines = append(lines, fmt.Sprintf("- %s `%s`", mdText(orDashStr(t.Title)), t.ID))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(b, "\n### %s (%d)\n\n%s\n", g.title, len(lines), strings.Join(lines, "\n"))
		}
	}
}

func writeMetrics(b *strings.Builder, a Analysis) {
	b.WriteString("\n## Metrics\n\n| metric | value |\n|---|---:|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, cell(v)) }
	row("duration", eventwords.Duration(a.Duration()))
	row("turns", thousands(int64(a.Turns)))
	if a.Iterations != a.Turns {
		row("iterations", thousands(int64(a.Iterations)))
	}
	row("input tokens", thousands(a.InputTokens))
	row("output tokens", thousands(a.OutputTokens))
	row("cost", money(a.CostUSD))
	if c := a.cacheLine(); c != "" {
		row("prompt cache", c)
	}
	row("tool calls", thousands(int64(a.ToolCalls)))
	row("tool errors", thousands(int64(a.ToolErrors)))
	row("tool success rate", percent(a.ToolSuccessRate))
	row("errors", kindList(a.Errors, a.ErrorsByKind))
	row("retries", thousands(int64(a.Retries)))
	row("interruptions", thousands(int64(a.Interruptions)))
	if t := a.Tasks; t != nil {
		row("tasks done / attempted", fmt.Sprintf("%d / %d (%s)", t.Done, t.Attempted, percent(t.SuccessRate)))
	}
	if len(a.Tools) > 0 {
		b.WriteString("\n| tool | calls | errors |\n|---|---:|---:|\n")
		for _, s := range a.Tools {
			fmt.Fprintf(b, "| %s | %d | %d |\n", cell(s.Name), s.Calls, s.Errors)
		}
	}
}

// writeErrors lists errors.jsonl; for a session recorded before that log
// existed, the error events say the same (see Load).
func writeErrors(b *strings.Builder, errs []memory.ErrorRecord) {
	b.WriteString("\n## Errors and retries\n\n")
	var lines []string
	for _, e := range errs {
		what := "**" + e.Kind + "**"
		if e.ToolName != "" {
			what += " (" + e.ToolName + ")"
		}
		lines = append(lines, recordLine(e.Time, e.Turn, what, e.Message))
	}
	writeList(b, lines)
}

// writeDecisions lists decisions.jsonl (interrupts, delivered messages,
// context trims, recoveries); interruptions recorded only as events are
// listed from those.
func writeDecisions(b *strings.Builder, decs []memory.DecisionRecord, evs []event.Event) {
	b.WriteString("\n## Interruptions and decisions\n\n")
	var lines []string
	interrupts := 0
	// A long run picks hundreds of tasks; when the list is too long for
	// the report the routine picks give way to the decisions that changed
	// the run's course.
	skipRoutine := len(decs) > recordsLimit
	leftOut := 0
	bold := func(s string) string { return "**" + s + "**" }
	code := func(s string) string { return "`" + s + "`" }
	for _, d := range decs {
		if d.Kind == "interrupt" {
			interrupts++
		}
		if skipRoutine && routine(d) {
			leftOut++
			continue
		}
		line := recordPrefix(d.Time, d.Turn) + mdText(decisionHead(d, bold, code))
		for _, w := range decisionWhy(d) {
			line += "\n  - " + mdText(w)
		}
		lines = append(lines, line)
	}
	if interrupts == 0 {
		for _, e := range evs {
			if e.Type == event.Interrupted {
				lines = append(lines, recordLine(e.Time, e.Turn, "**interrupt**", e.Text))
			}
		}
	}
	writeList(b, lines)
	if leftOut > 0 {
		fmt.Fprintf(b, "\n%d routine task picks are left out here; decisions.jsonl has each with its reason.\n", leftOut)
	}
}

func recordLine(t time.Time, turn int, what, text string) string {
	return recordPrefix(t, turn) + what + ": " + mdText(oneLine(text, 300))
}

// recordPrefix begins a record's list item: "- `15:04:05` turn 3 ".
func recordPrefix(t time.Time, turn int) string {
	s := "- "
	if !t.IsZero() {
		s += "`" + t.UTC().Format("15:04:05") + "` "
	}
	if turn > 0 {
		s += fmt.Sprintf("turn %d ", turn)
	}
	return s
}

func writeList(b *strings.Builder, lines []string) {
	if len(lines) == 0 {
		b.WriteString("None.\n")
		return
	}
	shown := lines[:min(len(lines), recordsLimit)]
	b.WriteString(strings.Join(shown, "\n") + "\n")
	if more := len(lines) - len(shown); more > 0 {
		fmt.Fprintf(b, "- … and %d more\n", more)
	}
}

// writeFiles lists the paths of write_file and edit_file calls that
// succeeded (a refused or failed edit touched nothing), once each.
func writeFiles(b *strings.Builder, evs []event.Event) {
	b.WriteString("\n## Files touched\n\n")
	calls := map[string]event.Event{}
	type touch struct{ writes, edits int }
	touched := map[string]*touch{}
	for _, e := range evs {
		switch e.Type {
		case event.ToolCall:
			calls[e.ToolID] = e
		case event.ToolResult:
			c, ok := calls[e.ToolID]
			if !e.IsError && ok && c.ToolName == tools.ToolApplyPatch {
				// A patch that applied touched every file it names.
				var a struct {
					Input string `json:"input"`
				}
				_ = json.Unmarshal(toolArgs(c), &a)
				for _, p := range applypatch.Paths(a.Input) {
					p = filepath.Clean(p)
					if touched[p] == nil {
						touched[p] = &touch{}
					}
					touched[p].edits++
				}
				continue
			}
			if e.IsError || !ok || !tools.Info(c.ToolName).WritesPaths {
				continue
			}
			p := toolPath(c)
			if p == "" {
				continue
			}
			p = filepath.Clean(p)
			if touched[p] == nil {
				touched[p] = &touch{}
			}
			if c.ToolName == tools.ToolWriteFile {
				touched[p].writes++
			} else {
				touched[p].edits++
			}
		}
	}
	if len(touched) == 0 {
		b.WriteString("None.\n")
		return
	}
	paths := make([]string, 0, len(touched))
	for p := range touched {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		t := touched[p]
		var what []string
		if t.writes > 0 {
			what = append(what, fmt.Sprintf("written %d×", t.writes))
		}
		if t.edits > 0 {
			what = append(what, fmt.Sprintf("edited %d×", t.edits))
		}
		fmt.Fprintf(b, "- %s (%s)\n", codeSpan(p), strings.Join(what, ", "))
	}
}

// mdText keeps text from starting markdown it does not mean: a leading
// '#' or '>' would make a heading or a quote of a list item, and a '<'
// could open raw HTML that hides the rest of the line (an error message
// quoting "<path>").
func mdText(s string) string {
	s = strings.ReplaceAll(s, "<", "&lt;")
	if strings.HasPrefix(s, "#") || strings.HasPrefix(s, ">") {
		s = `\` + s
	}
	return s
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(mdText(s), "|", `\|`) }

// codeSpan wraps s in enough backticks that a backtick inside it does not
// end the span.
func codeSpan(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// writeReviews says what reviewing cost, per task: the reviews, their
// tokens and their time (ralph review, ralph run --review).
func writeReviews(b *strings.Builder, rs []ReviewStat) {
	if len(rs) == 0 {
		return
	}
	b.WriteString("\n## Reviews\n\n| task | reviews | tokens | time |\n|---|---|---|---|\n")
	for _, r := range rs {
		task := "(outside a task)"
		if r.Task != "" {
			task = "`" + r.Task + "`"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s |\n", task, r.Reviews, r.Tokens, (time.Duration(r.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
	}
}
