package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Hints that are true (issue 57, item 7): every hint ralph gives names
// only what works where it is given.

// In CI a refused command's hint, to the person (stderr) and to the
// model (its tool result, in the stand-in model's request log), names
// --yes and the --allowed-tools rule that allows the command, and never
// recommends --wait-for-answers, which CI ignores. Without a terminal
// outside CI, --wait-for-answers does work, and the hint names it.
func TestRefusalHintNamesOnlyWhatWorks(t *testing.T) {
	t.Parallel()
	const waitWay = "--wait-for-answers to wait"
	for _, tc := range []struct {
		name     string
		env      []string
		args     []string
		wantWait bool
	}{
		{"CI", []string{"CI=true"}, nil, false},
		{"CI with --wait-for-answers", []string{"CI=true"}, []string{"--wait-for-answers"}, false},
		{"no terminal", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
			dir := t.TempDir()
			args := append([]string{"--base-url", srv.URL}, tc.args...)
			r := ralph(t, dir, cleanEnv(t, tc.env...), nil, append(args, "make ran.txt")...)
			if r.code != 0 || exists(filepath.Join(dir, "ran.txt")) {
				t.Fatalf("exit %d, ran.txt %v\n%s", r.code, exists(filepath.Join(dir, "ran.txt")), r.stderr)
			}
			told := toolResults(srv.Requests()[1])["run_command"]
			if len(told) != 1 {
				t.Fatalf("the model was told %q", told)
			}
			var summary string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.Contains(l, "not run because") {
					summary = l
				}
			}
			if summary == "" {
				t.Fatalf("stderr does not say the command was not run:\n%s", r.stderr)
			}
			if !strings.Contains(summary, "1 command was not run because it needs approval") {
				t.Errorf("stderr does not say it in the singular: %q", summary)
			}
			for who, hint := range map[string]string{"the model": told[0], "the person": summary} {
				if !strings.Contains(hint, "--yes (-y)") || !strings.Contains(hint, "--allowed-tools 'Bash(echo:*)'") {
					t.Errorf("%s was not told the ways that work (--yes, --allowed-tools 'Bash(echo:*)'): %q", who, hint)
				}
				if got := strings.Contains(hint, waitWay); got != tc.wantWait {
					t.Errorf("%s's hint names %q: %v, want %v: %q", who, waitWay, got, tc.wantWait, hint)
				}
			}
		})
	}
}

// A passing verify is a line, as a failing one is: in the live progress
// of ralph run on a terminal and in ralph logs (the verified event,
// through the one view of an event as a line).
func TestPassingVerifyIsALine(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] one\n  Verify: `test -f done.log` passes\n")
	const line = "✓ verify passed: `test -f done.log`"
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "-y", "run", "--retries", "0")
	r.waitFor(line, 60*time.Second)
	r.expectExit(0, 60*time.Second)
	logs := ralph(t, dir, cleanEnv(t), nil, "logs")
	if !strings.Contains(logs.stdout, line) {
		t.Fatalf("ralph logs lacks %q:\n%s%s", line, logs.stdout, logs.stderr)
	}
}

// A ralph run that stops at --max-iterations says so in its own subtype,
// error_max_iterations, not a conversation's error_max_turns, and counts
// in the singular: "after 1 iteration", "1 task open".
func TestMaxIterationsResult(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run", "--max-iterations", "1")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["subtype"] != "error_max_iterations" || m["is_error"] != true {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	for _, want := range []string{"stopped after 1 iteration with 1 task open", "after 1 iteration"} {
		if !strings.Contains(r.stderr+r.stdout, want) {
			t.Errorf("the run does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
	for _, bad := range []string{"1 iterations", "1 task(s)", "iteration(s)"} {
		if strings.Contains(r.stderr+r.stdout, bad) {
			t.Errorf("the run says %q:\n%s\n%s", bad, r.stdout, r.stderr)
		}
	}
	transcript := readFile(t, filepath.Join(sessionDir(t, dir), "transcript.md"))
	if strings.Contains(transcript, "after 1 turns") {
		t.Errorf("the transcript says \"after 1 turns\":\n%s", transcript)
	}
}

// A file ralph's own tools wrote counts in files_changed where git cannot
// tell (no repository): the one-shot's result and the session's facts
// (ralph sessions --json). A file written, then edited, counts once; in a
// git repository the checkpoints tell and the tools' count is not added
// to theirs, so it is 1 there too.
func TestFilesChangedOutsideGit(t *testing.T) {
	t.Parallel()
	for _, inGit := range []bool{false, true} {
		name := map[bool]string{false: "no git", true: "git"}[inGit]
		t.Run(name, func(t *testing.T) {
			srv := inlineServer(t, toolScenario(t, "write-edit", [][]toolCall{
				{{"write_file", `{"path":"hello.txt","content":"hi\n"}`}},
				{{"edit_file", `{"path":"hello.txt","old_string":"hi","new_string":"hello"}`}},
			}, "done"))
			dir := t.TempDir()
			if inGit {
				gitInitT(t, dir)
			}
			r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "write hello.txt")
			m := resultLine(t, r.stdout)
			if r.code != 0 || m["files_changed"] != 1.0 {
				t.Fatalf("exit %d, files_changed %v, want 1\n%s\n%s", r.code, m["files_changed"], r.stdout, r.stderr)
			}
			if got := readFile(t, filepath.Join(dir, "hello.txt")); got != "hello\n" {
				t.Fatalf("hello.txt is %q", got)
			}
			logs := ralph(t, dir, cleanEnv(t), nil, "logs")
			if !strings.Contains(logs.stdout, "± hello.txt") {
				t.Errorf("ralph logs does not show the change of hello.txt:\n%s", logs.stdout)
			}
		})
	}
}

// ralph answer says what the answerer can type as its arguments, never
// the keys a terminal reads one by one ([y]es, "? explains"): an answer
// it does not take is told the words it does take, and the reply to an
// answer names the question in a line.
func TestAnswerSaysItsArguments(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "make ran.txt")
	waitFor(t, "the question", 20*time.Second, func() bool {
		return strings.Contains(steer(t, dir, env, "status").stdout, "waiting_for_input")
	})
	keys := []string{"[y]es", "[n]o", "[a]lways", "[p]", "? explains", "y/n"}
	bad := steer(t, dir, env, "answer", "maybe")
	if bad.code == 0 || !strings.Contains(bad.stderr, `y (yes), n (no), "t: WHY" (no, and tell it why), always, or project (always, in the project)`) {
		t.Errorf("ralph answer maybe: exit %d, does not say the words it takes: %q", bad.code, bad.stderr)
	}
	r := steer(t, dir, env, "answer", "y")
	if r.code != 0 || !strings.Contains(r.stdout, "answered yes to question #1: run `echo ran > ran.txt`") {
		t.Fatalf("ralph answer y: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	for _, k := range keys {
		if strings.Contains(r.stdout+r.stderr+bad.stdout+bad.stderr, k) {
			t.Errorf("ralph answer echoes the terminal's key hint %q:\n%s%s\n%s%s", k, bad.stdout, bad.stderr, r.stdout, r.stderr)
		}
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// ralph plan --tracker beads without bd checks first, as ralph run
// --tracker beads does: one sentence, exit 2, no request to the model,
// and no file left behind (no RALPH_TASKS.md, RALPH_GOALS.md or .ralph).
func TestPlanBeadsWithoutBdChecksFirst(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"never","responses":[{"text":"a plan"}]}`)
	bin := t.TempDir() // a PATH with git's directory and no bd
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	if err := os.Symlink(gitPath, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin
		}
	}
	for _, args := range [][]string{{"plan", "--tracker", "beads", "add a cache"}, {"run", "--tracker", "beads"}} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			before := len(srv.Requests())
			r := ralph(t, dir, env, nil, append([]string{"--base-url", srv.URL}, args...)...)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "needs the bd command, which is not installed or not on PATH") {
				t.Fatalf("exit %d, want 2 and one sentence on bd: %q", r.code, r.stderr)
			}
			if n := len(srv.Requests()) - before; n != 0 {
				t.Errorf("%d requests reached the model", n)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("the failed command left %v behind", names)
			}
		})
	}
}

// Counts are singular when they are one: a one-shot of one turn ends
// "after 1 turn" in its transcript and in ralph logs, a run refused for
// want of approval says "1 command was not run".
func TestSingularCounts(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"one","responses":[{"text":"four"}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "what is 2+2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	transcript := readFile(t, filepath.Join(sessionDir(t, dir), "transcript.md"))
	logs := ralph(t, dir, cleanEnv(t), nil, "logs").stdout
	for what, s := range map[string]string{"transcript.md": transcript, "ralph logs": logs} {
		if !strings.Contains(s, "after 1 turn") || strings.Contains(s, "1 turns") {
			t.Errorf("%s does not say \"after 1 turn\" in the singular:\n%s", what, s)
		}
	}
}
