package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With nobody at a terminal, a one-shot does not wait for an answer: a
// command that needs approval is refused at once, nothing runs, and the
// refusal says how to allow it or to wait. In CI nothing waits, even with
// --wait-for-answers, and the refusal says so.
func TestHeadlessOneShotNeverHangs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		wants  []string
		notice string // on stderr
	}{
		{"no terminal", nil, nil, []string{"there is no terminal to ask at", "--yes", "--wait-for-answers"}, ""},
		{"CI wins", []string{"CI=true"}, []string{"--wait-for-answers"}, []string{"CI=true is set, and in CI ralph never waits for an answer (not even with --wait-for-answers)", "--yes"}, "CI=true is set: --wait-for-answers is ignored"},
		{"GitHub Actions", []string{"GITHUB_ACTIONS=true"}, []string{"--wait-for-answers=10m"}, []string{"GITHUB_ACTIONS=true is set"}, "GITHUB_ACTIONS=true is set: --wait-for-answers is ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
			dir := t.TempDir()
			args := append([]string{"--base-url", srv.URL, "--json"}, tc.args...)
			start := time.Now()
			r := ralph(t, dir, cleanEnv(t, tc.env...), nil, append(args, "make ran.txt")...)
			took := time.Since(start)
			// A one-shot that waited would wait for --answer-timeout (an
			// hour by default): far beyond what a run takes on a machine
			// as loaded as the parallel suite makes it.
			if took > 30*time.Second {
				t.Errorf("took %s: a headless one-shot waited", took)
			}
			if r.code != 0 || exists(filepath.Join(dir, "ran.txt")) {
				t.Fatalf("exit %d, ran.txt %v\n%s", r.code, exists(filepath.Join(dir, "ran.txt")), r.stderr)
			}
			told := toolResults(srv.Requests()[1])["run_command"]
			for _, want := range tc.wants {
				if len(told) != 1 || !strings.Contains(told[0], want) {
					t.Errorf("the model was told %q, want it to say %q", told, want)
				}
			}
			if !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stderr, tc.notice) {
				t.Errorf("stderr does not say how to allow it, or lacks %q: %q", tc.notice, r.stderr)
			}
		})
	}
}

// Left working with nobody at a terminal, ralph run waits for ralph
// answer, but not for ever: after --answer-timeout the question counts
// as refused, the model is told no answer came, and the run goes on.
func TestHeadlessRunAnswerTimeout(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
	dir := t.TempDir()
	writeTasks(t, dir, "make ran.txt")
	start := time.Now()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "run", "--answer-timeout", "2s", "--retries", "0")
	took := time.Since(start)
	if took < 2*time.Second || took > 20*time.Second {
		t.Errorf("the run took %s, want the 2 s wait and little more", took)
	}
	if exists(filepath.Join(dir, "ran.txt")) {
		t.Fatal("the command ran without an answer")
	}
	told := toolResults(srv.Requests()[1])["run_command"]
	if len(told) != 1 || !strings.Contains(told[0], "no answer came within 2s") {
		t.Fatalf("the model was told %q", told)
	}
	if !strings.Contains(r.stderr, "waiting up to 2s for an answer to question #1") {
		t.Errorf("stderr does not say how long it waits: %q", r.stderr)
	}
}

// askScenario is a model that asks the person which colour, then ends.
func askScenario(t testing.TB) string {
	return toolScenario(t, "ask", [][]toolCall{{{"ask_user", `{"question":"which colour should the button be?","choices":["red","blue"]}`}}}, "done")
}

// A model's question in a run left working: ralph status shows it, ralph
// answer with a choice's number answers it, the model's next request
// carries the answer, and the question and its answer are in the
// session's decisions. Unanswered, it ends after --answer-timeout and the
// model is told to decide itself.
func TestHeadlessRunAskUser(t *testing.T) {
	t.Parallel()
	t.Run("answered", func(t *testing.T) {
		srv := inlineServer(t, askScenario(t))
		dir := t.TempDir()
		writeTasks(t, dir, "style the button")
		env := cleanEnv(t)
		cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "run", "--retries", "0")
		waitSocket(t, dir, env)
		waitFor(t, "the question in ralph status", 20*time.Second, func() bool {
			st := ralph(t, dir, env, nil, "status", "--json")
			return strings.Contains(st.stdout, "which colour should the button be?")
		})
		if st := ralph(t, dir, env, nil, "status"); !strings.Contains(st.stdout, `ralph answer --id 1 "your answer"`) || !strings.Contains(st.stdout, "2. blue") {
			t.Errorf("ralph status does not show the question and how to answer it:\n%s", st.stdout)
		}
		if r := steer(t, dir, env, "answer", "2"); r.code != 0 || !strings.Contains(r.stdout, "blue") {
			t.Fatalf("ralph answer 2: exit %d %q %q", r.code, r.stdout, r.stderr)
		}
		if code, _ := exitCode(t, cmd, 30*time.Second); code > 1 {
			t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
		}
		told := toolResults(srv.Requests()[1])["ask_user"]
		if len(told) != 1 || told[0] != "the person answered: blue" {
			t.Fatalf("the model was told %q", told)
		}
		decisions := readFile(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
		if !strings.Contains(decisions, `"kind":"question"`) || !strings.Contains(decisions, "the person answered: blue") {
			t.Fatalf("decisions.jsonl lacks the question:\n%s", decisions)
		}
		if rep := ralph(t, dir, env, nil, "report"); !strings.Contains(rep.stdout, "asked: which colour should the button be?") || !strings.Contains(rep.stdout, "the person answered: blue") {
			t.Errorf("ralph report lacks the question and its answer:\n%s%s", rep.stdout, rep.stderr)
		}
	})
	t.Run("no answer in time", func(t *testing.T) {
		srv := inlineServer(t, askScenario(t))
		dir := t.TempDir()
		writeTasks(t, dir, "style the button")
		r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "run", "--retries", "0", "--answer-timeout", "2s")
		if r.code > 1 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		told := toolResults(srv.Requests()[1])["ask_user"]
		if len(told) != 1 || !strings.Contains(told[0], "no answer came within 2s") || !strings.Contains(told[0], "decide yourself") {
			t.Fatalf("the model was told %q", told)
		}
	})
}

// A one-shot with nobody at a terminal does not wait for the model's
// question either: the model is told at once to decide itself.
func TestHeadlessOneShotAskUserDoesNotWait(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, askScenario(t))
	start := time.Now()
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "style the button")
	// Waiting would take the answer timeout (an hour): half a minute
	// catches that and leaves a busy machine its slack (3.7 s was seen).
	if r.code != 0 || time.Since(start) > 30*time.Second {
		t.Fatalf("exit %d after %s: %s", r.code, time.Since(start), r.stderr)
	}
	told := toolResults(srv.Requests()[1])["ask_user"]
	if len(told) != 1 || !strings.Contains(told[0], "there is no terminal to ask at") {
		t.Fatalf("the model was told %q", told)
	}
}

// In chat the model's question shows as its line, the person's next line
// answers it (a choice by its number), the model reads the answer, and the
// conversation on disk keeps the question and the answer.
func TestChatAskUser(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, askScenario(t))
	dir := t.TempDir()
	r := startPTY(t, dir, cleanEnv(t, "NO_COLOR=1", "TERM=xterm"), "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("style the button\r")
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	screen := r.screen()
	for _, want := range []string{"the model asks: which colour should the button be?", "  1. red", "  2. blue"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the screen lacks %q:\n%s", want, screen)
		}
	}
	r.typeKeys("2\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "done") })
	r.leave(0, 20*time.Second)
	told := toolResults(srv.Requests()[1])["ask_user"]
	if len(told) != 1 || told[0] != "the person answered: blue" {
		t.Fatalf("the model was told %q", told)
	}
	var asked, answered bool
	for _, m := range savedMessages(t, sessionDir(t, dir)) {
		for _, c := range m.ToolCalls {
			asked = asked || strings.Contains(c.Arguments, "which colour should the button be?")
		}
		answered = answered || (m.Role == "tool" && m.Content == "the person answered: blue")
	}
	if !asked || !answered {
		t.Fatalf("the conversation on disk lacks the question (%v) or the answer (%v)", asked, answered)
	}
}
