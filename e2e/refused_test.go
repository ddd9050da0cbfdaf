package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// refusedBody is a refusal as OpenAI words it: the message is too long.
const refusedBody = `{"error":{"message":"messages[1].content: string too long","type":"invalid_request_error","code":"string_above_max_length"}}`

// refusedScenario refuses the first request with status and answers the
// later ones.
func refusedScenario(status int) string {
	return `{"name":"refused","responses":[` +
		`{"status":` + strconv.Itoa(status) + `,"body":` + jsonString(refusedBody) + `},` +
		`{"text":"hello to you"},{"text":"and again"},{"text":"third"}]}`
}

// lastUserTurn is the last user message a recorded request carried.
func lastUserTurn(t *testing.T, req llmtest.RecordedRequest) string {
	t.Helper()
	msgs := req.Request.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	t.Fatalf("request %d carries no user message:\n%s", req.Index, req.Body)
	return ""
}

// refusedThen pipes a message the endpoint refuses, then next, into a
// chat, and gives the chat's directory, its run and the second request.
func refusedThen(t *testing.T, next string) (string, runResult, llmtest.RecordedRequest) {
	t.Helper()
	srv := inlineServer(t, refusedScenario(400))
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("x too long a paste\n"+next+"\n"), "chat", "--base-url", srv.URL)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2\n%s%s", len(reqs), r.stdout, r.stderr)
	}
	return dir, r, reqs[1]
}

// A message the endpoint refused (HTTP 400) is set aside: the next message
// in the same chat is sent alone, not glued onto it, and the person is
// told once.
func TestRefusedMessageSetAsideInChat(t *testing.T) {
	t.Parallel()
	dir, r, second := refusedThen(t, "hello")
	if got := lastUserTurn(t, second); got != "hello" {
		t.Fatalf("the message after the refused one went out as %q, want \"hello\" alone", got)
	}
	if strings.Contains(string(second.Body), "too long a paste") {
		t.Fatalf("the refused message was sent again:\n%s", second.Body)
	}
	all := r.stdout + r.stderr
	if n := strings.Count(all, "set aside"); n != 1 {
		t.Fatalf("the chat said the message is set aside %d times, want once:\n%s", n, all)
	}
	if !strings.Contains(all, "HTTP 400") || !strings.Contains(all, "/retry") {
		t.Fatalf("the chat did not give the endpoint's reason and /retry:\n%s", all)
	}
	// The transcript keeps the message, with the reason; the saved
	// conversation marks it.
	sess := onlySession(t, dir)
	tr := readFileT(t, filepath.Join(sess, "transcript.md"))
	if !strings.Contains(tr, "too long a paste") || !strings.Contains(tr, "refused by the endpoint (HTTP 400") {
		t.Fatalf("the transcript lacks the refused message or its reason:\n%s", tr)
	}
	msgs := readFileT(t, filepath.Join(sess, "messages.jsonl"))
	if !strings.Contains(msgs, `"refused":"HTTP 400`) {
		t.Fatalf("messages.jsonl does not mark the refused message:\n%s", msgs)
	}
	evs := readFileT(t, filepath.Join(sess, "events.jsonl"))
	if !strings.Contains(evs, `"type":"message_refused"`) {
		t.Fatalf("events.jsonl has no message_refused event:\n%s", evs)
	}
}

// /retry sends the refused message again.
func TestRefusedMessageRetry(t *testing.T) {
	t.Parallel()
	_, _, second := refusedThen(t, "/retry")
	if got := lastUserTurn(t, second); got != "x too long a paste" {
		t.Fatalf("/retry sent %q, want the refused message", got)
	}
}

// A one-shot whose message is refused fails; `ralph -c` with another
// message sends only that one.
func TestRefusedMessageSetAsideAcrossContinue(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, refusedScenario(400))
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "first, far too long")
	if r.code == 0 {
		t.Fatalf("a refused one-shot exited 0:\n%s%s", r.stdout, r.stderr)
	}
	first := r.stderr
	r = ralph(t, dir, env, nil, "-c", "--base-url", srv.URL, "second, unrelated")
	if r.code != 0 {
		t.Fatalf("ralph -c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := lastUserTurn(t, reqs[1]); !strings.HasSuffix(got, "second, unrelated") || strings.Contains(string(reqs[1].Body), "far too long") {
		t.Fatalf("ralph -c sent the refused message again: last user turn %q", got)
	}
	if !strings.Contains(first, "set aside") {
		t.Fatalf("the one-shot did not say the message is set aside:\n%s", first)
	}
}

// A failure that is no refusal (a 429 through every retry) keeps the
// person's text: the next message goes out with it, as before.
func TestFailedNotRefusedMessageKept(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"limited","responses":[`+
		`{"status":429,"headers":{"Retry-After":"0"}},{"status":429,"headers":{"Retry-After":"0"}},{"status":429,"headers":{"Retry-After":"0"}},`+
		`{"status":429,"headers":{"Retry-After":"0"}},{"status":429,"headers":{"Retry-After":"0"}},`+
		`{"text":"hello to you"}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("keep this text\nhello\n"), "chat", "--base-url", srv.URL)
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests\n%s%s", len(reqs), r.stdout, r.stderr)
	}
	last := reqs[len(reqs)-1]
	if got := lastUserTurn(t, last); got != "keep this text\n\nhello" {
		t.Fatalf("after a 429 the next message went out as %q, want the kept text merged with it", got)
	}
	if strings.Contains(r.stdout+r.stderr, "set aside") {
		t.Fatalf("a rate-limited message was called set aside:\n%s%s", r.stdout, r.stderr)
	}
}

// onlySession is the one session directory under dir.
func onlySession(t *testing.T, dir string) string {
	t.Helper()
	ids, err := os.ReadDir(filepath.Join(dir, ".ralph", "sessions"))
	if err != nil || len(ids) != 1 {
		t.Fatalf("sessions: %v, %d of them, want 1", err, len(ids))
	}
	return filepath.Join(dir, ".ralph", "sessions", ids[0].Name())
}
