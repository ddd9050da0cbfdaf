package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// compactSummary is what the stand-in model writes when asked to
// summarise: it names the code word in words the conversation never
// used, so a request that carries them carries the summary.
const compactSummary = "## Decisions\n- The person chose a code word, a large sea bird, to be kept for later.\n## Files\nnone\n## Open questions\nnone\n## What is next\n- Answer the next question."

// summaryWords are the words only the summary has.
const summaryWords = "a large sea bird"

// compactedEvents are the conversation_compacted lines of a session's
// events.jsonl.
func compactedEvents(t *testing.T, sess string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range streamLines(t, readFileT(t, filepath.Join(sess, "events.jsonl"))) {
		if ev["type"] == "conversation_compacted" {
			out = append(out, ev)
		}
	}
	return out
}

// /compact in a chat summarises the conversation in place: the
// summarising request carries the conversation and the focus; the next
// request carries the summary and the last exchange, not the turns
// before; the chat stays in its one session, whose transcript and events
// say so; and `ralph chat -c` goes on in the compacted conversation.
func TestCompactInChat(t *testing.T) {
	t.Parallel()
	sum, _ := json.Marshal(compactSummary)
	srv := inlineServer(t, `{"name":"compact","responses":[
		{"text":"Noted: the code word is PELICAN."},
		{"text":"Second answer."},
		{"text":`+string(sum)+`},
		{"text":"Third answer."},
		{"text":"Fourth answer."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	in := "remember the word PELICAN\nsecond question\n/compact keep the code word\nthird question\n"
	r := ralph(t, dir, env, strings.NewReader(in), "chat")
	if r.code != 0 {
		t.Fatalf("chat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4\n%s%s", len(reqs), r.stdout, r.stderr)
	}
	summarising := string(reqs[2].Body)
	// The last exchange is kept as it was, so the summary is of the turns
	// before it.
	for _, want := range []string{"remember the word PELICAN", "keep the code word", "## Open questions"} {
		if !strings.Contains(summarising, want) {
			t.Fatalf("the summarising request lacks %q:\n%s", want, summarising)
		}
	}
	if strings.Contains(summarising, `"tools"`) {
		t.Fatalf("the summarising request offers tools:\n%s", summarising)
	}
	next := string(reqs[3].Body)
	if strings.Contains(next, "remember the word PELICAN") || !strings.Contains(next, summaryWords) ||
		!strings.Contains(next, "second question") || lastUserTurn(t, reqs[3]) != "third question" {
		t.Fatalf("the request after /compact is not the summary, the last exchange and the new message:\n%s", next)
	}
	if !strings.Contains(r.stdout, "Compacted: the conversation goes on in this session") || !strings.Contains(r.stdout, summaryWords) {
		t.Fatalf("/compact did not say what it did:\n%s", r.stdout)
	}
	sess := onlySession(t, dir)
	evs := compactedEvents(t, sess)
	if len(evs) != 1 {
		t.Fatalf("%d conversation_compacted events, want 1", len(evs))
	}
	c, _ := evs[0]["compaction"].(map[string]any)
	if c["cause"] != "command" || c["kept"] != float64(2) || c["focus"] != "keep the code word" || c["before_tokens"].(float64) <= 0 || c["after_tokens"].(float64) <= 0 {
		t.Fatalf("the event's counts: %v", evs[0])
	}
	if tr := readFileT(t, filepath.Join(sess, "transcript.md")); !strings.Contains(tr, "compacted the conversation") || !strings.Contains(tr, summaryWords) {
		t.Fatalf("the transcript does not say the conversation was compacted:\n%s", tr)
	}
	// messages.jsonl keeps the whole conversation and the mark after it.
	if m := readFileT(t, filepath.Join(sess, "messages.jsonl")); !strings.Contains(m, "remember the word PELICAN") || !strings.Contains(m, `"compacted":{"kept":2`) {
		t.Fatalf("messages.jsonl lacks the conversation or the mark:\n%s", m)
	}

	r = ralph(t, dir, env, strings.NewReader("fourth question\n"), "chat", "-c")
	if r.code != 0 {
		t.Fatalf("chat -c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs = srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	last := string(reqs[4].Body)
	if strings.Contains(last, "remember the word PELICAN") || !strings.Contains(last, summaryWords) || !strings.Contains(last, "third question") {
		t.Fatalf("ralph chat -c did not go on in the compacted conversation:\n%s", last)
	}
	if onlySession(t, dir) != sess {
		t.Fatal("the chat moved to another session")
	}
}

// A context-length refusal (OpenAI's real error body, in the scenario)
// compacts the conversation and tries once more: one line says so, an
// event records it, and the answer comes; the retried request carries
// the summary and the refused message, not the earlier turns.
func TestContextLengthRefusalCompactsAndRetries(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "context_length")
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "remember the word PELICAN"); r.code != 0 {
		t.Fatalf("first: exit %d\n%s", r.code, r.stderr)
	}
	r := ralph(t, dir, env, nil, "-c", "what word did I ask you to remember?")
	if r.code != 0 || !strings.Contains(r.stdout, "Answered after the compaction.") {
		t.Fatalf("-c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "compacted it"); n != 1 || !strings.Contains(r.stderr, "trying once more") {
		t.Fatalf("the compaction was said %d times, want once:\n%s", n, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (answer, refusal, summary, retry)", len(reqs))
	}
	if !strings.Contains(string(reqs[2].Body), "remember the word PELICAN") {
		t.Fatalf("the summarising request lacks the conversation:\n%s", reqs[2].Body)
	}
	retry := string(reqs[3].Body)
	if strings.Contains(retry, "remember the word PELICAN") || !strings.Contains(retry, summaryWords) ||
		!strings.HasSuffix(lastUserTurn(t, reqs[3]), "what word did I ask you to remember?") {
		t.Fatalf("the retried request is not the summary and the message:\n%s", retry)
	}
	sess := onlySession(t, dir)
	evs := compactedEvents(t, sess)
	if len(evs) != 1 {
		t.Fatalf("%d conversation_compacted events, want 1", len(evs))
	}
	if c, _ := evs[0]["compaction"].(map[string]any); c["cause"] != "context_length" {
		t.Fatalf("the event's cause: %v", evs[0])
	}
	if strings.Contains(readFileT(t, filepath.Join(sess, "events.jsonl")), `"message_refused"`) {
		t.Fatal("the message was set aside though the retry was answered")
	}
	// The next message goes on in the compacted conversation.
	if r := ralph(t, dir, env, nil, "-c", "and now?"); r.code != 0 {
		t.Fatalf("-c again: exit %d\n%s", r.code, r.stderr)
	}
	if last := string(srv.Requests()[4].Body); strings.Contains(last, "remember the word PELICAN") || !strings.Contains(last, summaryWords) {
		t.Fatalf("the next request is not the compacted conversation:\n%s", last)
	}
}

// A refused message that alone is larger than a request may carry is
// said to be so, in one sentence, and set aside: nothing is summarised
// and nothing is sent again.
func TestContextLengthOversizedMessageIsSaid(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "context_length")
	dir := t.TempDir()
	// gpt-4's window is 8,192 tokens; the message is about 17,000.
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=gpt-4")
	if r := ralph(t, dir, env, nil, "remember the word PELICAN"); r.code != 0 {
		t.Fatalf("first: exit %d\n%s", r.code, r.stderr)
	}
	big := "please read this: " + strings.Repeat("lorem ipsum ", 5000)
	r := ralph(t, dir, env, nil, "-c", big)
	if r.code == 0 {
		t.Fatalf("an oversized message exited 0:\n%s", r.stderr)
	}
	oneSentence(t, r.stderr, "the message alone is about", "gpt-4", "maximum context length is 128000 tokens", "set aside")
	if strings.Contains(r.stderr, "compacted") {
		t.Fatalf("an oversized message was compacted for:\n%s", r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (the answer and the refusal; no summary, no retry)", n)
	}
	sess := onlySession(t, dir)
	if evs := compactedEvents(t, sess); len(evs) != 0 {
		t.Fatalf("%d compactions, want none", len(evs))
	}
	if !strings.Contains(readFileT(t, filepath.Join(sess, "events.jsonl")), `"message_refused"`) {
		t.Fatal("the oversized message was not set aside")
	}
}

// /cost prints the session's tokens and their cost, in the words ralph
// status uses.
func TestCostInChat(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"cost","responses":[{"text":"hi","usage":{"prompt_tokens":1234,"completion_tokens":56}}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), strings.NewReader("hello\n/cost\n"), "chat")
	if r.code != 0 {
		t.Fatalf("chat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := filepath.Base(onlySession(t, dir))
	if !strings.Contains(r.stdout, "session "+id+": 1,234 in / 56 out, cost $") {
		t.Fatalf("/cost did not print the session's tokens and cost:\n%s", r.stdout)
	}
	st := ralph(t, dir, cleanEnv(t), nil, "status")
	if !strings.Contains(st.stdout, "1,234 in / 56 out, cost $") {
		t.Fatalf("ralph status says it otherwise:\n%s", st.stdout)
	}
}

// In the chat on a terminal, /compact says what it did and the next
// message goes out compacted; /cost prints the session's tokens; the
// chat stays in its one session.
func TestChatCompactAndCostOnScreen(t *testing.T) {
	t.Parallel()
	sum, _ := json.Marshal(compactSummary)
	srv := inlineServer(t, `{"name":"chat-compact","responses":[
		{"text":"Noted: the code word is PELICAN.","usage":{"prompt_tokens":1000,"completion_tokens":10}},
		{"text":"Second answer."},
		{"text":`+string(sum)+`},
		{"text":"Third answer."}]}`)
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("remember the word PELICAN\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Noted:") })
	r.typeKeys("second question\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Second answer.") })
	r.typeKeys("/compact\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Compacted: the conversation goes on") })
	r.typeKeys("third question\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Third answer.") })
	r.typeKeys("/cost\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, " out, cost $") })
	r.leave(0, 20*time.Second)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if next := string(reqs[3].Body); strings.Contains(next, "remember the word PELICAN") || !strings.Contains(next, summaryWords) {
		t.Fatalf("the request after /compact is not compacted:\n%s", next)
	}
	sess := onlySession(t, dir)
	if evs := compactedEvents(t, sess); len(evs) != 1 {
		t.Fatalf("%d conversation_compacted events, want 1", len(evs))
	}
}
