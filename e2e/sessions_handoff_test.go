package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// handoffSummary is what the stand-in model writes when asked for a
// hand-off summary: it says the code word in words the old conversation
// never used, so a request that carries them carries the summary.
const handoffSummary = "## Decisions\n- The person chose the code word PELICAN to be kept for later.\n## Files\nnone\n## Open questions\nnone\n## What is next\n- Say the code word when asked."

// sessionLinks reads a session's links.json.
func sessionLinks(t *testing.T, dir, id string) map[string]any {
	t.Helper()
	var l map[string]any
	data, err := os.ReadFile(filepath.Join(dir, ".ralph", "sessions", id, "links.json"))
	if err != nil {
		t.Fatalf("session %s has no links: %v", id, err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// requestText is everything a recorded chat request sent the model, as
// one string.
func requestText(msgs []string) string { return strings.Join(msgs, "\n") }

// A hand-off starts a new session from a summary the model writes of the
// old one: the summary request carries the old conversation and the
// fixed headings; the new session's first request carries the summary
// and none of the old conversation, and the answer comes from it; the
// two records name each other, and ralph report shows the links.
func TestHandoffNewSessionKnowsTheOldOneFromTheSummaryAlone(t *testing.T) {
	t.Parallel()
	sum, _ := json.Marshal(handoffSummary)
	srv := inlineServer(t, `{"name":"handoff","responses":[
		{"text":"Noted: remember the word PELICAN."},
		{"text":`+string(sum)+`},
		{"text":"The code word is PELICAN."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "remember the word PELICAN"); r.code != 0 {
		t.Fatalf("first task: exit %d\n%s", r.code, r.stderr)
	}
	old := sessionIDs(t, dir)[0]
	h := ralph(t, dir, env, nil, "handoff", "keep", "going")
	if h.code != 0 {
		t.Fatalf("handoff: exit %d\n%s", h.code, h.stderr)
	}
	if !strings.Contains(h.stdout, "The person chose the code word PELICAN") {
		t.Fatalf("handoff did not print the summary:\n%s", h.stdout)
	}
	ids := sessionIDs(t, dir)
	if len(ids) != 2 {
		t.Fatalf("want the old and the new session, have %v", ids)
	}
	next := ids[1]
	a := ralph(t, dir, env, nil, "--json", "-c", "what word did I ask you to remember?")
	if a.code != 0 {
		t.Fatalf("follow-up: exit %d\n%s", a.code, a.stderr)
	}
	if res := resultLine(t, a.stdout); res["session_id"] != next || !strings.Contains(res["result"].(string), "PELICAN") {
		t.Fatalf("the follow-up did not go on in the new session %s with the answer: %v", next, res)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("want 3 model requests, got %d", len(reqs))
	}
	content := func(i int) string {
		var parts []string
		for _, m := range reqs[i].Request.Messages {
			parts = append(parts, m.Content)
		}
		return requestText(parts)
	}
	summaryReq := content(1)
	for _, want := range []string{"remember the word PELICAN", "## Decisions", "## Files", "## Open questions", "## What is next", "keep going"} {
		if !strings.Contains(summaryReq, want) {
			t.Fatalf("the summary request lacks %q:\n%s", want, summaryReq)
		}
	}
	if len(reqs[1].Request.Tools) != 0 {
		t.Fatalf("the summary request offered tools")
	}
	first := content(2)
	if !strings.Contains(first, "The person chose the code word PELICAN") || !strings.Contains(first, old) {
		t.Fatalf("the new session's first request lacks the summary or the old session's id:\n%s", first)
	}
	if strings.Contains(first, "remember the word PELICAN") || strings.Contains(first, "Noted:") {
		t.Fatalf("the new session's first request carries the old conversation:\n%s", first)
	}
	if l := sessionLinks(t, dir, old); !slices.Contains(l["handed_off_to"].([]any), any(next)) {
		t.Fatalf("the old session's links do not name the new one: %v", l)
	}
	if l := sessionLinks(t, dir, next); l["handed_off_from"] != old {
		t.Fatalf("the new session's links do not name the old one: %v", l)
	}
	if tr := readFileT(t, filepath.Join(dir, ".ralph", "sessions", old, "transcript.md")); !strings.Contains(tr, "Handed off to session "+next) {
		t.Fatalf("the old transcript does not say where it went:\n%s", tr)
	}
	rep := ralph(t, dir, env, nil, "report", next)
	if rep.code != 0 || !strings.Contains(rep.stdout, "handed off from "+old) {
		t.Fatalf("ralph report of the new session does not show its link (exit %d):\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	rep = ralph(t, dir, env, nil, "report", old)
	if rep.code != 0 || !strings.Contains(rep.stdout, "handed off to "+next) {
		t.Fatalf("ralph report of the old session does not show its link (exit %d):\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
}

// --fork-session continues a copy: the fork's turns go to a new session
// whose history starts as the original's, and the original's messages
// are byte for byte as they were; the fork names its origin.
func TestForkSessionLeavesTheOriginalByteIdentical(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"fork","responses":[
		{"text":"First answer."},
		{"text":"Forked answer one."},
		{"text":"Forked answer two."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "first question"); r.code != 0 {
		t.Fatalf("first task: exit %d\n%s", r.code, r.stderr)
	}
	orig := sessionIDs(t, dir)[0]
	origDir := filepath.Join(dir, ".ralph", "sessions", orig)
	before := readFileT(t, filepath.Join(origDir, "messages.jsonl"))
	f := ralph(t, dir, env, nil, "--json", "-c", "--fork-session", "try another way")
	if f.code != 0 {
		t.Fatalf("fork: exit %d\n%s", f.code, f.stderr)
	}
	fork := resultLine(t, f.stdout)["session_id"].(string)
	if fork == orig {
		t.Fatalf("the fork went on in the original session %s", orig)
	}
	if r := ralph(t, dir, env, nil, "--session", fork, "and again"); r.code != 0 {
		t.Fatalf("the fork's second turn: exit %d\n%s", r.code, r.stderr)
	}
	if after := readFileT(t, filepath.Join(origDir, "messages.jsonl")); after != before {
		t.Fatalf("the original's messages changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	forked := readFileT(t, filepath.Join(dir, ".ralph", "sessions", fork, "messages.jsonl"))
	if !strings.HasPrefix(forked, before) || !strings.Contains(forked, "and again") {
		t.Fatalf("the fork's history does not start as the original's and go on:\n%s", forked)
	}
	// The fork's first request carried the original conversation.
	if reqs := srv.Requests(); len(reqs) != 3 || !bytes.Contains(reqs[1].Body, []byte("First answer.")) {
		t.Fatalf("the fork's first request lacks the original conversation")
	}
	if l := sessionLinks(t, dir, fork); l["forked_from"] != orig {
		t.Fatalf("the fork does not name its origin: %v", l)
	}
	if _, err := os.Stat(filepath.Join(origDir, "links.json")); err == nil {
		t.Fatalf("the fork wrote into the original's record")
	}
	rep := ralph(t, dir, env, nil, "report", fork)
	if rep.code != 0 || !strings.Contains(rep.stdout, "forked from "+orig) {
		t.Fatalf("ralph report of the fork does not show its origin (exit %d):\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	if h := ralph(t, dir, env, nil, "report", fork, "--html"); h.code != 0 || !strings.Contains(readFileT(t, strings.TrimSpace(h.stdout)), "forked from "+orig) {
		t.Fatalf("the HTML report of the fork does not show its origin (exit %d):\n%s\n%s", h.code, h.stdout, h.stderr)
	}
}

// ralph sessions merge A B puts a summary of B into A's history with a
// link, marks B merged into A, and A's next turn is sent the summary.
func TestSessionsMergeBringsASummaryIntoA(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"merge","responses":[
		{"text":"A: the parser is done."},
		{"text":"B: the lexer is done."},
		{"text":"## Decisions\n- B finished the LEXER-MARK work.\n## Files\nnone\n## Open questions\nnone\n## What is next\nnone"},
		{"text":"Both are done."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	for _, task := range []string{"write the parser", "write the lexer"} {
		if r := ralph(t, dir, env, nil, task); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", task, r.code, r.stderr)
		}
	}
	ids := sessionIDs(t, dir)
	a, b := ids[0], ids[1]
	bMessages := readFileT(t, filepath.Join(dir, ".ralph", "sessions", b, "messages.jsonl"))
	m := ralph(t, dir, env, nil, "--json", "sessions", "merge", a, b)
	if m.code != 0 {
		t.Fatalf("merge: exit %d\n%s", m.code, m.stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(m.stdout), &res); err != nil || res["session_id"] != a || res["merged_from"] != b || !strings.Contains(res["summary"].(string), "LEXER-MARK") {
		t.Fatalf("merge --json: %v\n%s", err, m.stdout)
	}
	if got := readFileT(t, filepath.Join(dir, ".ralph", "sessions", b, "messages.jsonl")); got != bMessages {
		t.Fatalf("the merge changed B's conversation")
	}
	if l := sessionLinks(t, dir, b); l["merged_into"] != a {
		t.Fatalf("B is not marked merged into A: %v", l)
	}
	if r := ralph(t, dir, env, nil, "--session", a, "what is done?"); r.code != 0 {
		t.Fatalf("A's next turn: exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if !bytes.Contains(reqs[2].Body, []byte("write the lexer")) {
		t.Fatalf("the summary request lacks B's conversation")
	}
	last := reqs[3].Body
	if !bytes.Contains(last, []byte("LEXER-MARK")) || !bytes.Contains(last, []byte(b)) || !bytes.Contains(last, []byte("write the parser")) {
		t.Fatalf("A's next request lacks its own conversation or B's summary with B's id:\n%s", last)
	}
	rep := ralph(t, dir, env, nil, "report", a)
	if rep.code != 0 || !strings.Contains(rep.stdout, "merged from "+b) {
		t.Fatalf("ralph report of A does not show the merge (exit %d):\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
}

// A session that is not there is one sentence and exit 2, for every
// command of this part.
func TestHandoffAndMergeOfUnknownSessions(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"one","responses":[{"text":"ok"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "hello"); r.code != 0 {
		t.Fatalf("first task: exit %d\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"handoff", "nosuch"}, {"handoff", "99999", "a goal"}, {"sessions", "merge", "nosuch", "nosuch2"}} {
		r := ralph(t, dir, env, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "no session matches") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("%v: exit %d, want 2 and one sentence naming no session:\n%s", args, r.code, r.stderr)
		}
	}
	if r := ralph(t, dir, env, nil, "--fork-session", "hi"); r.code != 2 || !strings.Contains(r.stderr, "--fork-session goes with -c or --resume") {
		t.Fatalf("--fork-session alone: exit %d\n%s", r.code, r.stderr)
	}
}

// /handoff in chat: the shell goes on in the new session, whose first
// request carries the summary and not the conversation before it; the
// session the chat leaves names the new one.
func TestChatHandoffSwitchesToTheNewSession(t *testing.T) {
	t.Parallel()
	sum, _ := json.Marshal(handoffSummary)
	srv := inlineServer(t, `{"name":"chat-handoff","responses":[
		{"text":"Noted: remember the word PELICAN."},
		{"text":`+string(sum)+`},
		{"text":"The code word is PELICAN."}]}`)
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("remember the word PELICAN\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Noted:") })
	old := sessionIDs(t, dir)[0]
	r.typeKeys("/handoff say the word\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Handed off") })
	r.typeKeys("what word?\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "The code word is PELICAN") })
	r.leave(0, 20*time.Second)
	ids := sessionIDs(t, dir)
	if len(ids) != 2 || ids[0] != old {
		t.Fatalf("want the old session and one new one, have %v", ids)
	}
	next := ids[1]
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("want 3 model requests, got %d", len(reqs))
	}
	if !bytes.Contains(reqs[1].Body, []byte("say the word")) || !bytes.Contains(reqs[1].Body, []byte("remember the word PELICAN")) {
		t.Fatalf("the summary request lacks the goal or the conversation:\n%s", reqs[1].Body)
	}
	first := reqs[2].Body
	if !bytes.Contains(first, []byte("The person chose the code word PELICAN")) || bytes.Contains(first, []byte("remember the word PELICAN")) {
		t.Fatalf("the new session's first request is not the summary alone:\n%s", first)
	}
	if got := readFileT(t, filepath.Join(dir, ".ralph", "sessions", next, "messages.jsonl")); !strings.Contains(got, "what word?") {
		t.Fatalf("the chat's next message did not go to the new session %s:\n%s", next, got)
	}
	if l := sessionLinks(t, dir, old); !slices.Contains(l["handed_off_to"].([]any), any(next)) {
		t.Fatalf("the old session's links do not name the new one: %v", l)
	}
}
