package report

import (
	"github.com/ralph-dev/ralph/memory/text"

	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
)

// writeTimeline is the report's per-task timeline: one table row per task
// in the order the session first worked on it, then every attempt that
// did not end done, with why.
func writeTimeline(b *strings.Builder, tl Timeline) {
	if len(tl.Tasks) == 0 {
		return
	}
	b.WriteString("\n## Task timeline\n\n")
	b.WriteString("| task | state | attempts | started | ended | work time | tokens | cost | commands | verify | files |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, t := range tl.Tasks {
		cmds := fmt.Sprint(t.Commands)
		if t.FailedCmds > 0 {
			cmds += fmt.Sprintf(" (%d failed)", t.FailedCmds)
		}
		fmt.Fprintf(b, "| `%s` %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %d |\n",
			t.ID, cell(oneLine(t.Title, 60)), t.State, len(t.Attempts), clock(t.Start), clock(t.End),
			eventwords.Duration(time.Duration(t.DurationMS)*time.Millisecond), thousands(t.InputTokens+t.OutputTokens),
			money(t.CostUSD), cmds, verifyLine(t), len(t.Files))
	}
	var lines []string
	for _, t := range tl.Tasks {
		for _, a := range t.Attempts {
			if a.Outcome == OutcomeDone {
				continue
			}
			line := fmt.Sprintf("- `%s` attempt %d: **%s** after %s", t.ID, a.Number, a.Outcome,
				eventwords.Duration(time.Duration(a.DurationMS)*time.Millisecond))
			if a.Agent != "" {
				line += " (" + a.Agent + ")"
			}
			if a.Error != "" {
				line += ": " + mdText(oneLine(a.Error, 300))
			}
			lines = append(lines, line)
		}
	}
	if len(lines) > 0 {
		b.WriteString("\n### Attempts that did not finish the task\n\n")
		writeList(b, lines)
	}
}

// writeInsights is the insights as short markdown lists.
func writeInsights(b *strings.Builder, in Insights) {
	b.WriteString("\n## Insights\n\n")
	task := func(t TaskFigure) string { return fmt.Sprintf("`%s` %s", t.ID, mdText(oneLine(t.Title, 60))) }
	var items []string
	if len(in.Slowest) > 0 {
		var parts []string
		for _, t := range in.Slowest[:min(3, len(in.Slowest))] {
			parts = append(parts, fmt.Sprintf("%s (%s)", task(t), eventwords.Duration(time.Duration(t.DurationMS)*time.Millisecond)))
		}
		items = append(items, "Slowest tasks: "+strings.Join(parts, ", "))
	}
	if len(in.MostRetried) > 0 {
		var parts []string
		for _, t := range in.MostRetried[:min(3, len(in.MostRetried))] {
			parts = append(parts, fmt.Sprintf("%s (%s, %s)", task(t), text.Counted(t.Attempts, "attempt", "attempts"), t.State))
		}
		items = append(items, "Most retried: "+strings.Join(parts, ", "))
	}
	for _, c := range in.FailingCommands[:min(3, len(in.FailingCommands))] {
		line := fmt.Sprintf("Command %s failed %d of %s", codeSpan(oneLine(c.Command, 80)), c.Failures, text.Counted(c.Runs, "run", "runs"))
		if c.LastFailure != "" {
			line += ": " + mdText(c.LastFailure)
		}
		items = append(items, line)
	}
	for _, p := range in.ErrorPatterns[:min(3, len(in.ErrorPatterns))] {
		items = append(items, fmt.Sprintf("Error ×%d (%s): %s", p.Count, kindNames(p.Kinds), codeSpan(p.Pattern)))
	}
	if len(in.CostByTask) > 0 && (in.CostByTask[0].CostUSD != nil || in.CostByTask[0].InputTokens > 0) {
		t := in.CostByTask[0]
		items = append(items, fmt.Sprintf("Costliest task: %s (%s, %s tokens)", task(t), money(t.CostUSD), thousands(t.InputTokens+t.OutputTokens)))
	}
	if len(items) == 0 {
		b.WriteString("Nothing stands out: no tasks, failed commands or errors.\n")
		return
	}
	for _, it := range items {
		b.WriteString("- " + it + "\n")
	}
}
