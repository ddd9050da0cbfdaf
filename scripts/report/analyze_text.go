package report

import (
	"github.com/ralph-dev/ralph/memory/text"

	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
)

// Text is the analysis for people: one fact a line, labels aligned, tools
// indented under their total.
func (a Analysis) Text() string {
	var t table
	t.add("session", a.SessionID)
	status := a.Status
	if extra := strings.Join(nonEmpty(a.Mode, a.Model), ", "); extra != "" {
		status += " (" + extra + ")"
	}
	t.add("status", status)
	dur := eventwords.Duration(a.Duration())
	if !a.StartedAt.IsZero() {
		dur += "  (started " + a.StartedAt.Local().Format("2006-01-02 15:04:05") + ")"
	}
	t.add("duration", dur)
	turns := strconv.Itoa(a.Turns)
	if a.Iterations != a.Turns {
		turns += " (" + text.Counted(a.Iterations, "iteration", "iterations") + ")"
	}
	t.add("turns", turns)
	t.add("tokens", thousands(a.InputTokens)+" in / "+thousands(a.OutputTokens)+" out")
	t.add("cost", money(a.CostUSD))
	if c := a.cacheLine(); c != "" {
		t.add("cache", c)
	}
	if a.ToolCalls+a.ToolErrors == 0 {
		t.add("tool calls", "none")
	} else {
		t.add("tool calls", fmt.Sprintf("%d, %d %s, %s succeeded", a.ToolCalls, a.ToolErrors,
			text.Plural(a.ToolErrors, "error", "errors"), percent(a.ToolSuccessRate)))
	}
	for _, s := range a.Tools {
		line := fmt.Sprintf("  %-14s %4d", s.Name, s.Calls)
		if s.Errors > 0 {
			line += fmt.Sprintf("  %d %s", s.Errors, text.Plural(s.Errors, "error", "errors"))
		}
		t.add("", line)
	}
	t.add("errors", kindList(a.Errors, a.ErrorsByKind))
	t.add("retries", strconv.Itoa(a.Retries))
	t.add("interruptions", strconv.Itoa(a.Interruptions))
	if ts := a.Tasks; ts != nil {
		t.add("tasks", fmt.Sprintf("%d done, %d failed of %d attempted, %s succeeded", ts.Done, ts.Failed, ts.Attempted, percent(ts.SuccessRate)))
	}
	for _, r := range a.Reviews {
		what := "review"
		if r.Task != "" {
			what += " of " + r.Task
		}
		t.add("reviewing", fmt.Sprintf("%s: %s, %s, %s", what, text.Counted(r.Reviews, "review", "reviews"), text.Counted(r.Tokens, "token", "tokens"),
			(time.Duration(r.DurationMS)*time.Millisecond).Round(100*time.Millisecond)))
	}
	for i, line := range a.Decisions.text() {
		label := ""
		if i == 0 {
			label = "decisions"
		}
		t.add(label, line)
	}
	for _, n := range a.Notes {
		t.add("note", n)
	}
	var b strings.Builder
	t.write(&b, "")
	return b.String()
}

// kindList is "5: model 1, retry 2, tool 2", kinds in name order so two
// reports read alike.
func kindList(total int, by map[string]int) string {
	if total == 0 {
		return "0"
	}
	kinds := make([]string, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return strconv.Itoa(total) + ": " + strings.Join(parts, ", ")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cacheLine is the prompt cache's part of a session's input tokens and
// what caching saved, "" when the endpoint reported no cached tokens.
func (a Analysis) cacheLine() string {
	if a.CacheReadTokens+a.CacheWriteTokens == 0 {
		return ""
	}
	s := thousands(a.CacheReadTokens) + " read from the cache / " + thousands(a.CacheWriteTokens) + " written to it"
	if a.CacheSavedUSD != nil {
		if *a.CacheSavedUSD >= 0 {
			s += "; caching saved " + money(a.CacheSavedUSD)
		} else {
			s += "; caching cost " + money(ptr(-*a.CacheSavedUSD)) + " more than it saved so far"
		}
	}
	return s
}
