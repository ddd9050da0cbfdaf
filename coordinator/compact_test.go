package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// partsModel answers each summarising request with "SUMMARY-n" and keeps
// every request it was sent.
type partsModel struct{ got []string }

func (m *partsModel) Stream(_ context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
	m.got = append(m.got, req.Messages[0].Content)
	return llm.Response{Message: conversation.Message{Role: conversation.RoleAssistant, Content: fmt.Sprintf("SUMMARY-%d", len(m.got))}}, nil
}

// requestTokens is a request's estimated size, as the window counts it.
func requestTokens(s string) int {
	return conversation.EstimateTokens(conversation.Message{Role: conversation.RoleUser, Content: s})
}

// A conversation that fits goes in one request, whole.
func TestSummarizeFitsInOneRequest(t *testing.T) {
	m := &partsModel{}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: "fix the parser"}, {Role: conversation.RoleAssistant, Content: "fixed"}}
	summary, _, err := Summarize(context.Background(), m, "m", 4000, msgs, "")
	if err != nil || summary != "SUMMARY-1" || len(m.got) != 1 {
		t.Fatalf("%q %v, %d requests", summary, err, len(m.got))
	}
}

// Over the budget, the oldest tool outputs are cut first: a conversation
// whose size is its tool outputs still goes in one request, within the
// budget, with every message's words in it.
func TestSummarizeCutsOldToolOutputsFirst(t *testing.T) {
	m := &partsModel{}
	var msgs []conversation.Message
	for i := range 6 {
		msgs = append(msgs,
			conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("step %d please", i)},
			conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c", Name: "run_command", Arguments: `{"command":"make"}`}}},
			conversation.Message{Role: conversation.RoleTool, ToolCallID: "c", Content: strings.Repeat("output line\n", 300)},
			conversation.Message{Role: conversation.RoleAssistant, Content: fmt.Sprintf("did step %d", i)})
	}
	const budget = 2500
	if _, _, err := Summarize(context.Background(), m, "m", budget, msgs, ""); err != nil || len(m.got) != 1 {
		t.Fatalf("%v, %d requests, want 1", err, len(m.got))
	}
	req := m.got[0]
	if n := requestTokens(req); n > budget {
		t.Fatalf("the request is about %d tokens, over the budget of %d", n, budget)
	}
	for i := range 6 {
		if !strings.Contains(req, fmt.Sprintf("step %d please", i)) || !strings.Contains(req, fmt.Sprintf("did step %d", i)) {
			t.Fatalf("step %d's words are missing:\n%s", i, req)
		}
	}
	if !strings.Contains(req, "more bytes]") {
		t.Fatalf("no tool output was cut:\n%s", req)
	}
}

// A conversation too large for one request even so is summarised in
// parts, each within the budget, each after the first carrying the
// summary so far, and nothing said is left out.
func TestSummarizeInParts(t *testing.T) {
	m := &partsModel{}
	var msgs []conversation.Message
	for i := range 20 {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("MSG-%02d %s", i, strings.Repeat("words ", 200))},
			conversation.Message{Role: conversation.RoleAssistant, Content: fmt.Sprintf("ANS-%02d", i)})
	}
	// One message far larger than a part is cut in the middle.
	msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "HUGE-START " + strings.Repeat("x", 40000) + " HUGE-END"})
	const budget = 2000
	summary, _, err := Summarize(context.Background(), m, "m", budget, msgs, "the parser")
	if err != nil || len(m.got) < 3 || summary != fmt.Sprintf("SUMMARY-%d", len(m.got)) {
		t.Fatalf("%q %v after %d requests", summary, err, len(m.got))
	}
	all := strings.Join(m.got, "\n")
	for i, req := range m.got {
		if n := requestTokens(req); n > budget {
			t.Fatalf("request %d is about %d tokens, over the budget of %d", i+1, n, budget)
		}
		if !strings.Contains(req, "What matters from here: the parser") {
			t.Fatalf("request %d lacks the focus", i+1)
		}
		if i > 0 && !strings.Contains(req, fmt.Sprintf("<summary-so-far>\nSUMMARY-%d\n", i)) {
			t.Fatalf("request %d does not carry the summary of the parts before:\n%s", i+1, req)
		}
	}
	for i := range 20 {
		if !strings.Contains(all, fmt.Sprintf("MSG-%02d", i)) || !strings.Contains(all, fmt.Sprintf("ANS-%02d", i)) {
			t.Fatalf("message %d was left out", i)
		}
	}
	if !strings.Contains(all, "HUGE-START") || !strings.Contains(all, "HUGE-END") || !strings.Contains(all, "cut to fit the context window") {
		t.Fatal("the huge message was not cut in the middle")
	}
}

// /compact summarises the conversation in place: the next request carries
// the system prompt, the summary and the last exchange, not the turns
// before; messages.jsonl reads back the same; the session is the same.
func TestCompactInPlace(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"answer one"},{"text":"answer two"},{"text":"THE SUMMARY"},{"text":"answer three"}]}`)
	ctx := context.Background()
	h.coord.Run(ctx, "OLD question "+strings.Repeat("at length ", 300))
	h.coord.Run(ctx, "last question")
	c, err := h.coord.Compact(ctx, "the parser")
	if err != nil || c.Summary != "THE SUMMARY" || c.Kept != 2 || c.AfterTokens >= c.BeforeTokens || c.Cause != conversation.CompactedByCommand {
		t.Fatalf("Compact = %+v, %v", c, err)
	}
	if got := h.srv.Requests()[2].Request.Messages[0].Content; !strings.Contains(got, "OLD question") || !strings.Contains(got, "the parser") {
		t.Fatalf("the summarising request lacks the conversation or the focus:\n%s", got)
	}
	if h.count(event.ConversationCompacted) != 1 || h.coord.SessionID() != "s1" {
		t.Fatalf("%d compacted events, session %s", h.count(event.ConversationCompacted), h.coord.SessionID())
	}
	h.coord.Run(ctx, "next question")
	var roles, texts []string
	for _, m := range h.lastRequestMessages() {
		roles, texts = append(roles, m.Role), append(texts, m.Content)
	}
	joined := strings.Join(texts, "\n")
	if strings.Contains(joined, "OLD question") || !strings.Contains(joined, "THE SUMMARY") || !strings.Contains(joined, "last question") ||
		strings.Join(roles, ",") != "system,user,assistant,user,assistant,user" {
		t.Fatalf("the request after /compact: %v\n%s", roles, joined)
	}
	saved, err := memory.LoadMessages(h.fs, h.sess.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := h.coord.Messages()
	got, _ := json.Marshal(saved)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Fatalf("messages.jsonl reads back\n%s\nwant\n%s", got, wantJSON)
	}
}

// An empty conversation has nothing to compact, and no request is made.
func TestCompactNothing(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"x"}]}`)
	if _, err := h.coord.Compact(context.Background(), ""); !errors.Is(err, ErrNothingToCompact) || len(h.srv.Requests()) != 0 {
		t.Fatalf("Compact of nothing: %v, %d requests", err, len(h.srv.Requests()))
	}
}

// contextError is OpenAI's context-length refusal.
const contextError = `{"status":400,"body":"{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.\",\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}"}`

// A context-length refusal compacts the conversation and tries once
// more; a second refusal of the same message sets it aside, without
// compacting again.
func TestContextLengthCompactsOnce(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"one"},`+contextError+`,{"text":"SUM"},{"text":"two"},`+
		contextError+`,{"text":"SUM2"},`+contextError+`,{"text":"never"}]}`)
	ctx := context.Background()
	h.coord.Run(ctx, "first")
	res := h.coord.Run(ctx, "second")
	if res.IsError || res.Text != "two" || h.count(event.ConversationCompacted) != 1 {
		t.Fatalf("after one compaction: %+v, %d compacted events", res, h.count(event.ConversationCompacted))
	}
	last := h.lastRequestMessages()
	if got := last[len(last)-1].Content; got != "second" || !strings.Contains(last[1].Content, "SUM") {
		t.Fatalf("the retry carried %+v", last)
	}
	res = h.coord.Run(ctx, "third")
	if !res.IsError || !errors.Is(res.Err, llm.ErrContextTooLong) || !strings.Contains(res.Err.Error(), "set aside") {
		t.Fatalf("a second refusal: %+v", res)
	}
	if n := len(h.srv.Requests()); n != 7 || h.count(event.ConversationCompacted) != 2 || h.count(event.MessageRefused) != 1 {
		t.Fatalf("%d requests, %d compactions, %d refusals; want 7, 2, 1", n, h.count(event.ConversationCompacted), h.count(event.MessageRefused))
	}
}

// A message alone larger than a request may carry is said to be so and
// set aside: nothing is summarised or tried again.
func TestContextLengthOversizedMessage(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"one"},`+contextError+`,{"text":"never"}]}`)
	ctx := context.Background()
	h.coord.Run(ctx, "first")
	res := h.coord.Run(ctx, "big "+strings.Repeat("y", 200000))
	var o *OversizedError
	if !res.IsError || !errors.As(res.Err, &o) || !strings.Contains(res.Err.Error(), "the message alone is about") || !strings.Contains(res.Err.Error(), "set aside") {
		t.Fatalf("oversized: %+v", res)
	}
	if n := len(h.srv.Requests()); n != 2 || h.count(event.ConversationCompacted) != 0 {
		t.Fatalf("%d requests and %d compactions, want 2 and none", n, h.count(event.ConversationCompacted))
	}
}

// A refusal with nothing before the message to compact fails as before.
func TestContextLengthNothingToCompact(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[`+contextError+`,{"text":"never"}]}`)
	res := h.coord.Run(context.Background(), "hello")
	if !res.IsError || !errors.Is(res.Err, llm.ErrContextTooLong) || len(h.srv.Requests()) != 1 {
		t.Fatalf("%+v after %d requests", res, len(h.srv.Requests()))
	}
}

// The window a refusal states is believed over ralph's own idea of it:
// a message that fits the window ralph assumed (32,768 tokens for an
// unknown model) but not the 4,096 the server says is oversized.
func TestContextLengthStatedWindow(t *testing.T) {
	small := `{"status":400,"body":"{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.\",\"code\":\"context_length_exceeded\"}}"}`
	h := newHarness(t, `{"name":"x","responses":[{"text":"one"},`+small+`,{"text":"never"}]}`)
	ctx := context.Background()
	h.coord.Run(ctx, "first")
	res := h.coord.Run(ctx, strings.Repeat("z", 30000))
	var o *OversizedError
	if !errors.As(res.Err, &o) || o.Budget > llm.InputBudget(4096) {
		t.Fatalf("the stated window was not believed: %+v", res)
	}
}
