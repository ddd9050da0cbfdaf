package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 57, item 2: both sides of a conversation are shown. Every prompt
// is a user_message event; ralph logs, the transcript and ralph sessions
// show the person's words, each once; a run's start is not shown as a new
// session; and a record written before the user_message existed (its
// prompt in session_started only) still reads the same.

// eventTypesOf counts the events of each type in a session's events.jsonl
// and returns the texts of its user_message events.
func eventTypesOf(t *testing.T, sess string) (map[string]int, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(sess, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	var said []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct{ Type, Text string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		counts[ev.Type]++
		if ev.Type == "user_message" {
			said = append(said, ev.Text)
		}
	}
	return counts, said
}

// sessionsFirstWords is the first words ralph sessions --json gives each
// session of the project at dir.
func sessionsFirstWords(t *testing.T, dir string, env []string) map[string]string {
	t.Helper()
	r := ralph(t, dir, env, nil, "sessions", "--json", "--project", dir)
	var out struct {
		Sessions []struct {
			SessionID   string `json:"session_id"`
			FirstPrompt string `json:"first_prompt"`
		} `json:"sessions"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("ralph sessions: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := map[string]string{}
	for _, s := range out.Sessions {
		m[s.SessionID] = s.FirstPrompt
	}
	return m
}

// TestBothSidesInLogsTranscriptAndSessions: a one-shot, the same session
// continued with -c, and a piped chat. ralph logs shows each prompt (once)
// with its answer and no "session started" per message; the transcript
// has each prompt once; events.jsonl has one user_message per prompt and
// one session_started per run; ralph sessions lists the person's first
// words. The same log with its user_message lines taken out (as ralph
// wrote it before issue 57) shows the same prompts.
func TestBothSidesInLogsTranscriptAndSessions(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"the answer is four"}]}`)
	dir, env := t.TempDir(), cleanEnv(t)
	first, second, piped := "what is two plus two, PERSON-ONE", "and three plus three, PERSON-TWO", "hello from a pipe, PERSON-THREE"
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", first)
	if r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sess := sessionDir(t, dir)
	id := filepath.Base(sess)
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "-c", second)
	if got := resultLine(t, r.stdout)["session_id"]; r.code != 0 || got != id {
		t.Fatalf("-c: exit %d in session %v, want %s\n%s\n%s", r.code, got, id, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, strings.NewReader(piped+"\n"), "chat", "--base-url", srv.URL); r.code != 0 {
		t.Fatalf("piped chat: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	pipedID := ""
	all, _ := filepath.Glob(filepath.Join(filepath.Dir(sess), "*"))
	for _, d := range all {
		if filepath.Base(d) != id {
			pipedID = filepath.Base(d)
		}
	}
	if len(all) != 2 {
		t.Fatalf("sessions %q, want the one-shot's and the piped chat's", all)
	}

	counts, said := eventTypesOf(t, sess)
	if strings.Join(said, "|") != first+"|"+second || counts["session_started"] != 2 {
		t.Errorf("events.jsonl: user_message texts %q and %d session_started, want one of each per prompt", said, counts["session_started"])
	}
	if _, said := eventTypesOf(t, filepath.Join(filepath.Dir(sess), pipedID)); strings.Join(said, "|") != piped {
		t.Errorf("the piped chat's user_messages: %q, want %q", said, piped)
	}

	checkLogs := func(what string) {
		t.Helper()
		r := ralph(t, dir, env, nil, "logs", id)
		if r.code != 0 {
			t.Fatalf("ralph logs (%s): exit %d\n%s", what, r.code, r.stderr)
		}
		for _, p := range []string{first, second} {
			if n := strings.Count(r.stdout, "› "+p); n != 1 {
				t.Errorf("ralph logs (%s) shows the prompt %q %d times, want once:\n%s", what, p, n, r.stdout)
			}
		}
		if n := strings.Count(r.stdout, "│ the answer is four"); n != 2 {
			t.Errorf("ralph logs (%s) shows %d answers, want 2:\n%s", what, n, r.stdout)
		}
		if strings.Contains(r.stdout, "session started") {
			t.Errorf("ralph logs (%s) shows a run's start as a new session:\n%s", what, r.stdout)
		}
		if i, j := strings.Index(r.stdout, first), strings.Index(r.stdout, second); i < 0 || j < i {
			t.Errorf("ralph logs (%s): the prompts are out of order:\n%s", what, r.stdout)
		}
	}
	checkLogs("as written")
	if r := ralph(t, dir, env, nil, "logs", pipedID); !strings.Contains(r.stdout, "› "+piped) {
		t.Errorf("ralph logs of the piped chat lacks its prompt:\n%s", r.stdout)
	}

	tr := readFileT(t, filepath.Join(sess, "transcript.md"))
	for _, p := range []string{first, second} {
		if n := strings.Count(tr, "## › "+p+"\n"); n != 1 {
			t.Errorf("the transcript has the prompt %q %d times, want once:\n%s", p, n, tr)
		}
	}
	if n := strings.Count(tr, "## › "); n != 2 {
		t.Errorf("the transcript has %d user sections for 2 prompts:\n%s", n, tr)
	}

	words := sessionsFirstWords(t, dir, env)
	if words[id] != first || words[pipedID] != piped {
		t.Errorf("ralph sessions' first words: %q, want %q for %s and %q for %s", words, first, id, piped, pipedID)
	}
	if r := ralph(t, dir, env, nil, "sessions", "--project", dir); !strings.Contains(r.stdout, "PERSON-ONE") || !strings.Contains(r.stdout, "PERSON-THREE") {
		t.Errorf("ralph sessions does not show the person's first words:\n%s", r.stdout)
	}

	// As an older ralph wrote it: the prompts in session_started only.
	events := filepath.Join(sess, "events.jsonl")
	var kept []string
	for _, line := range strings.SplitAfter(readFileT(t, events), "\n") {
		if !strings.Contains(line, `"type":"user_message"`) {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(events, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	checkLogs("an older record")
}

// TestFirstWordsOfPlanAndRun: ralph sessions lists a plan session by the
// feature the person asked for, not by ralph's prompt around it, and a
// ralph run session, which no person prompted, by the title of the first
// task it took.
func TestFirstWordsOfPlanAndRun(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	feature := "add a login form, PLAN-WORDS"
	planSrv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "user" {
			if !strings.Contains(last.Content, "Plan this feature") || !strings.Contains(last.Content, feature) {
				return llmtest.Response{Text: "no plan asked for: " + last.Content}
			}
			plan := `{"title":"Login","goals":"People can log in.","tasks":[{"id":"form","title":"write the form"}]}`
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_plan", Arguments: plan}}}
		}
		return llmtest.Response{Text: "The plan has one task."}
	})
	t.Cleanup(planSrv.Close)
	planDir := t.TempDir()
	if r := ralph(t, planDir, env, nil, "--base-url", planSrv.URL, "plan", feature); r.code != 0 {
		t.Fatalf("ralph plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	planID := filepath.Base(sessionDir(t, planDir))
	if got := sessionsFirstWords(t, planDir, env)[planID]; got != feature {
		t.Errorf("the plan session's first words: %q, want the person's %q", got, feature)
	}
	if r := ralph(t, planDir, env, nil, "logs", planID); !strings.Contains(r.stdout, "› "+feature) {
		t.Errorf("ralph logs of the plan lacks the person's words:\n%s", r.stdout)
	}

	runSrv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(runSrv.Close)
	runDir := t.TempDir()
	writeTasks(t, runDir, "validate the e-mail field", "show errors inline")
	if r := ralph(t, runDir, env, nil, "--base-url", runSrv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("ralph run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	runID := filepath.Base(sessionDir(t, runDir))
	if got := sessionsFirstWords(t, runDir, env)[runID]; got != "validate the e-mail field" {
		t.Errorf("the run session's first words: %q, want its first task's title", got)
	}
	// Each task's prompt is a user_message of the agent that worked it.
	counts, said := eventTypesOf(t, sessionDir(t, runDir))
	if counts["user_message"] != 2 || !strings.Contains(strings.Join(said, "\n"), "validate the e-mail field") {
		t.Errorf("ralph run recorded %d user_messages for 2 tasks: %q", counts["user_message"], said)
	}
}
