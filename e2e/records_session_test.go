package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The small odd outputs of the records a first hour ran into (issue 68,
// item 14): each what a person reads of a session after the fact.

// longDecimal is a number printed with the binary noise of a float sum:
// more than twelve digits after the point.
var longDecimal = regexp.MustCompile(`[0-9]\.[0-9]{12,}`)

// TestCostIsRoundedInJSON: a cost of 12 tokens in and 14 out at
// gpt-4o-mini's list price is $0.0000102, which the sum of its parts in
// binary floating point makes 0.000010199999999999999. The one-shot's
// JSON result, its stream-json lines and ralph status --json all print
// it rounded.
func TestCostIsRoundedInJSON(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"cost","responses":[{"text":"hello","usage":{"prompt_tokens":12,"completion_tokens":14}}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "say hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"total_cost_usd":0.0000102`) || longDecimal.MatchString(r.stdout) {
		t.Fatalf("the JSON result's cost is not rounded:\n%s", r.stdout)
	}
	srv2 := inlineServer(t, `{"name":"cost","responses":[{"text":"hello","usage":{"prompt_tokens":12,"completion_tokens":14}}]}`)
	r = ralph(t, dir, env, nil, "--base-url", srv2.URL, "--output-format", "stream-json", "say hello again")
	if r.code != 0 || !strings.Contains(r.stdout, `"total_cost_usd":0.0000102`) || longDecimal.MatchString(r.stdout) {
		t.Fatalf("stream-json's cost is not rounded (exit %d):\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{{"status", "--json"}, {"sessions", "--json"}, {"analyze", "--json"}, {"report", "--json"}} {
		out := ralph(t, dir, env, nil, args...)
		if longDecimal.MatchString(out.stdout) {
			t.Errorf("ralph %s prints a cost unrounded:\n%s", strings.Join(args, " "), out.stdout)
		}
	}
}

// TestFailedPlanIsRecordedFailed: ralph plan whose model wrote no plan
// exits 1, and its session is recorded failed with the reason, not
// completed.
func TestFailedPlanIsRecordedFailed(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"noplan","responses":[{"text":"I would rather not plan."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "plan", "add a cache")
	if r.code != 1 || !strings.Contains(r.stderr, "the model wrote no plan") {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	var st struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(sessionDir(t, dir), "session.json"))), &st); err != nil {
		t.Fatal(err)
	}
	if st.Status != "failed" || !strings.Contains(st.Error, "no plan") {
		t.Fatalf("the plan's session is recorded %q (%q), want failed", st.Status, st.Error)
	}
	if s := ralph(t, dir, env, nil, "sessions"); !strings.Contains(s.stdout, "failed") {
		t.Errorf("ralph sessions does not say the plan failed:\n%s", s.stdout)
	}
}

// TestWatchOfAFinishedSessionShowsTheAnswer: a question the run asked and
// ralph answer answered is not shown as waiting when ralph watch replays
// the finished session: neither on a terminal nor in its lines.
func TestWatchOfAFinishedSessionShowsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, askScenario(t))
	dir := t.TempDir()
	writeTasks(t, dir, "style the button")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "run", "--retries", "0")
	waitSocket(t, dir, env)
	waitFor(t, "the question in ralph status", 20*time.Second, func() bool {
		return strings.Contains(ralph(t, dir, env, nil, "status", "--json").stdout, "which colour should the button be?")
	})
	if r := steer(t, dir, env, "answer", "2"); r.code != 0 {
		t.Fatalf("ralph answer 2: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 30*time.Second); code > 1 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	w := ralph(t, dir, env, nil, "watch")
	if w.code > 1 || !strings.Contains(w.stdout, "answered") {
		t.Fatalf("ralph watch (exit %d) does not show the answer:\n%s\n%s", w.code, w.stdout, w.stderr)
	}
	if strings.Contains(w.stdout, "ralph answer --id 1") {
		t.Errorf("ralph watch of the finished session still says how to answer the question:\n%s", w.stdout)
	}
	term := startPTY(t, dir, env, "watch")
	term.waitFor("ralph watch · ", 10*time.Second)
	term.waitFor("answered", 10*time.Second)
	time.Sleep(300 * time.Millisecond)
	if screen := term.screen(); strings.Contains(screen, "question") && strings.Contains(screen, "ralph answer --id 1") {
		t.Errorf("ralph watch on a terminal shows the answered question as waiting:\n%s", screen)
	}
}

// TestInterruptedTurnCountsItsTokens: a hard stop while the answer
// streams ends the stream before the server's usage, which comes at its
// end; the turn still counts what was spent, as an estimate marked so,
// in the result line and in session.json, not 0 tokens.
func TestInterruptedTurnCountsItsTokens(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "slow_stream")
	dir := t.TempDir()
	cmd, out, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "--output-format", "stream-json", "talk slowly")
	waitFor(t, "streamed text", 10*time.Second, func() bool { return strings.Count(out.String(), `"type":"text_delta"`) >= 3 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, errb.String())
	}
	m := resultLine(t, out.String())
	u, _ := m["usage"].(map[string]any)
	if m["subtype"] != "interrupted" || u == nil || u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 || u["estimated"] != true {
		t.Fatalf("the interrupted turn's result counts %v, want its tokens estimated and marked so", m["usage"])
	}
	var st struct {
		Usage struct {
			In        int  `json:"input_tokens"`
			Out       int  `json:"output_tokens"`
			Estimated bool `json:"estimated"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(sessionDir(t, dir), "session.json"))), &st); err != nil {
		t.Fatal(err)
	}
	if st.Usage.In <= 0 || st.Usage.Out <= 0 || !st.Usage.Estimated {
		t.Fatalf("session.json counts %+v for the interrupted turn", st.Usage)
	}
}

// TestContinuePassesOverASessionThatNeverReachedItsModel: after a
// conversation with answers, a prompt sent to an endpoint that cannot be
// reached makes a session holding only that prompt. ralph -c then goes on
// with the conversation before it, and says in one line which session it
// passed over and the prompt that waits there; ralph --resume of that
// session still sends its prompt. With no conversation before it, -c
// continues it, its prompt sent again.
func TestContinuePassesOverASessionThatNeverReachedItsModel(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"answers","loop":true,"responses":[{"text":"an answer"}]}`)
	down := inlineServer(t, `{"name":"down","responses":[{"text":"never"}]}`)
	down.Close()
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "the real question"); r.code != 0 {
		t.Fatalf("first: exit %d %s", r.code, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "--base-url", down.URL, "the lost words"); r.code == 0 || !strings.Contains(r.stderr, "cannot reach") {
		t.Fatalf("unreachable: exit %d %s", r.code, r.stderr)
	}
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-c", "the follow-up")
	if r.code != 0 {
		t.Fatalf("-c: exit %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "never reached its model") || !strings.Contains(r.stderr, `"the lost words"`) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("-c does not say in one line what it passed over:\n%s", r.stderr)
	}
	reqs := srv.Requests()
	sent := sentText(reqs[len(reqs)-1])
	if !strings.Contains(sent, "the real question") || !strings.Contains(sent, "an answer") || !strings.Contains(sent, "the follow-up") || strings.Contains(sent, "the lost words") {
		t.Fatalf("-c did not go on with the conversation that had answers:\n%s", sent)
	}

	// Alone in its project, the unreached session is continued, its
	// prompt kept.
	dir2 := t.TempDir()
	if r := ralph(t, dir2, env, nil, "--base-url", down.URL, "the only words"); r.code == 0 {
		t.Fatalf("unreachable: exit 0")
	}
	r = ralph(t, dir2, env, nil, "--base-url", srv.URL, "-c", "and more")
	reqs = srv.Requests()
	if sent := sentText(reqs[len(reqs)-1]); r.code != 0 || !strings.Contains(sent, "the only words") || !strings.Contains(sent, "and more") {
		t.Fatalf("-c (exit %d) lost the unreached prompt:\n%s\n%s", r.code, sent, r.stderr)
	}
	if !strings.Contains(r.stderr, "never reached its model") {
		t.Errorf("-c does not say it continues the unreached session:\n%s", r.stderr)
	}
}

// sentText is every message's content of a request, one per line.
func sentText(r llmtest.RecordedRequest) string {
	var b strings.Builder
	for _, m := range r.Request.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// TestDiffNamesTheLastRequest: /diff after two requests in one session
// shows the second one's change, and names it by the second request's
// words, not the session's first; ralph diff says the same, and its JSON
// gives both.
func TestDiffNamesTheLastRequest(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"two","responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"a\\n\"}"}]},
		{"text":"wrote a"},
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"b.txt\",\"content\":\"b\\n\"}"}]},
		{"text":"wrote b"}]}`)
	dir := t.TempDir()
	gitInitT(t, dir)
	env := cleanEnv(t)
	r := ralph(t, dir, env, strings.NewReader("write the first file\nwrite the second file\n/diff\n"), "script", "-", "--keep-going", "-y", "--base-url", srv.URL)
	if r.code != 0 {
		t.Fatalf("script: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	i := strings.Index(out, "your last request")
	if i < 0 || !strings.Contains(out[i:], "b.txt") {
		t.Fatalf("/diff does not show the last request:\n%s", out)
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	if !strings.Contains(line, `"write the second file"`) || strings.Contains(line, "write the first file") {
		t.Errorf("/diff names the last request by other words: %s", line)
	}
	d := ralph(t, dir, env, nil, "diff")
	if !strings.Contains(d.stderr, `"write the second file"`) || strings.Contains(d.stderr, "write the first file") {
		t.Errorf("ralph diff names the last request by other words: %s", d.stderr)
	}
	var dj struct {
		FirstWords   string `json:"first_words"`
		RequestWords string `json:"request_words"`
	}
	if err := json.Unmarshal([]byte(ralph(t, dir, env, nil, "diff", "--json").stdout), &dj); err != nil ||
		dj.FirstWords != "write the first file" || dj.RequestWords != "write the second file" {
		t.Errorf("ralph diff --json: %+v (%v)", dj, err)
	}
}

// TestStoppedAttemptIsNoFailedAttempt: ralph stop while a task's attempt
// works puts the task back to open with that attempt counted as stopped,
// not failed; when the run goes on with --retries 1, a failed attempt
// still leaves the one retry, which completes the task.
func TestStoppedAttemptIsNoFailedAttempt(t *testing.T) {
	t.Parallel()
	child := taskChildModel()
	var starts atomic.Int32
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "user" && taskPromptRe.MatchString(last.Content) {
			switch starts.Add(1) {
			case 1:
				return llmtest.Response{Text: "thinking it over", Stall: true}
			case 2:
				return llmtest.Response{Text: "I could not do it this time"}
			}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "write the log")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "--retries", "1")
	waitSocket(t, dir, env)
	waitFor(t, "the attempt in flight", 20*time.Second, func() bool { return starts.Load() == 1 })
	if r := steer(t, dir, env, "stop"); r.code != 0 {
		t.Fatalf("ralph stop: exit %d %s", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 30*time.Second); code == 0 {
		t.Fatalf("the stopped run exited 0\n%s\n%s", out.String(), errb.String())
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if !strings.Contains(tasks, "- [ ] write the log") || !strings.Contains(tasks, "attempts=1") || !strings.Contains(tasks, "stopped=1") {
		t.Fatalf("after the stop the task list says:\n%s", tasks)
	}
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--retries", "1")
	tasks = readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if r.code != 0 || !strings.Contains(tasks, "- [x] write the log") || starts.Load() != 3 {
		t.Fatalf("going on: exit %d after %d attempts; the stopped one spent the retry?\n%s\n%s", r.code, starts.Load(), tasks, r.stderr)
	}
}
