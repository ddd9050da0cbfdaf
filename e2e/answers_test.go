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
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		wants []string
	}{
		{"no terminal", nil, nil, []string{"there is no terminal to ask at", "--yes", "--wait-for-answers"}},
		{"CI wins", []string{"CI=true"}, []string{"--wait-for-answers"}, []string{"CI=true is set, and in CI ralph never waits for an answer (not even with --wait-for-answers)", "--yes"}},
		{"GitHub Actions", []string{"GITHUB_ACTIONS=true"}, []string{"--wait-for-answers=10m"}, []string{"GITHUB_ACTIONS=true is set"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
			dir := t.TempDir()
			args := append([]string{"--base-url", srv.URL, "--json"}, tc.args...)
			start := time.Now()
			r := ralph(t, dir, cleanEnv(t, tc.env...), nil, append(args, "make ran.txt")...)
			took := time.Since(start)
			if took > 2*time.Second {
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
			if !strings.Contains(r.stderr, "--yes") {
				t.Errorf("stderr does not say how to allow it: %q", r.stderr)
			}
		})
	}
}

// Left working with nobody at a terminal, ralph run waits for ralph
// answer, but not for ever: after --answer-timeout the question counts
// as refused, the model is told no answer came, and the run goes on.
func TestHeadlessRunAnswerTimeout(t *testing.T) {
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
