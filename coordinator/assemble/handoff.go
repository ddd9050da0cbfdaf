package assemble

import (
	"context"
	"fmt"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
)

// Handoff hands the conversation c holds off to a new session
// (coordinator.Handoff: a summary the model writes, a new record that
// starts with it) and links the two records both ways: the old session's
// links.json and transcript name the new one, the new one's the old. It
// is chat's /handoff and `ralph handoff`; call it only while nothing runs.
func Handoff(ctx context.Context, p *project.Project, c *coordinator.Coordinator, goal string) (coordinator.Handoff, error) {
	h, err := c.Handoff(ctx, goal)
	if err != nil {
		return h, err
	}
	if err := memory.UpdateLinks(p.Fs, p.Root, h.From, func(l *memory.Links) { l.HandedOffTo = memory.AddLink(l.HandedOffTo, h.To) }); err != nil {
		return h, err
	}
	if err := memory.UpdateLinks(p.Fs, p.Root, h.To, func(l *memory.Links) { l.HandedOffFrom = h.From }); err != nil {
		return h, err
	}
	if err := memory.NoteInTranscript(p.Fs, p.Root, h.From, fmt.Sprintf("---\n\n_Handed off to session %s (`ralph --session %s`)._", h.To, h.To)); err != nil {
		return h, err
	}
	note := fmt.Sprintf("_Handed off from session %s. It starts from this summary of that session:_\n\n%s\n\n---\n", h.From, h.Summary)
	if err := p.Session.AppendTranscript(note); err != nil {
		return h, fmt.Errorf("write the transcript of session %s: %w", h.To, err)
	}
	return h, nil
}

// Merge brings session from's conversation into this project's session
// (`ralph sessions merge A B`, with A resumed): the model summarises from's
// conversation, the summary goes into this session's history as context
// (coordinator.SummaryContext) with a link to from, and from is marked
// merged into this one. A summary rather than the messages themselves:
// two conversations' tool calls and turns interleaved would be a history
// no model was part of, and the whole of the other conversation would
// fill the context this session needs; the summary is what a person
// merging two threads wants carried over, and from keeps the whole
// conversation for `ralph report` and `ralph --session`. It returns the
// summary.
func Merge(ctx context.Context, p *project.Project, from string) (string, error) {
	into := p.Session.ID
	msgs, err := memory.LoadMessages(p.Fs, memory.SessionDir(p.Root, from))
	if err != nil {
		return "", err
	}
	if !coordinator.Conversed(msgs) {
		return "", fmt.Errorf("session %s has no conversation to merge", from)
	}
	budget := p.Config.ContextTokens
	if budget <= 0 {
		budget = llm.InputBudget(llm.ContextWindow(p.Config.Model))
	}
	summary, usage, err := coordinator.Summarize(ctx, p.Client, p.Config.Model, budget, msgs, "")
	if err != nil {
		return "", err
	}
	if err := p.Session.AppendMessages(coordinator.SummaryContext("session "+from+" was merged into this session", summary, "")...); err != nil {
		return "", err
	}
	price := p.PriceOf(p.Config.Model)
	if err := p.Session.SaveState(func(st *memory.State) {
		st.Usage = st.Usage.Add(usage)
		if price != nil {
			v := price.Cost(st.Usage)
			st.CostUSD = &v
		}
	}); err != nil {
		return "", err
	}
	if err := memory.UpdateLinks(p.Fs, p.Root, into, func(l *memory.Links) { l.MergedFrom = memory.AddLink(l.MergedFrom, from) }); err != nil {
		return "", err
	}
	if err := memory.UpdateLinks(p.Fs, p.Root, from, func(l *memory.Links) { l.MergedInto = into }); err != nil {
		return "", err
	}
	if err := p.Session.AppendTranscript(fmt.Sprintf("\n---\n\n_Merged from session %s; a summary of its conversation:_\n\n%s\n\n---\n", from, summary)); err != nil {
		return "", fmt.Errorf("write the transcript of session %s: %w", into, err)
	}
	if err := memory.NoteInTranscript(p.Fs, p.Root, from, fmt.Sprintf("---\n\n_Merged into session %s._", into)); err != nil {
		return "", err
	}
	return summary, nil
}
