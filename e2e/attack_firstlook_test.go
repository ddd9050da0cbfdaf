package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The first look at the work tree (git status and git log, for the system
// prompt) runs on the way to a session's first request. Where no
// configuration file can name a filter, it starts at once, without git's
// listing of the configuration that decides what ralph's other gits may
// run (memory/git lookGuard): these tests show that it still runs no
// program a file the model could write names, and that the listing, which
// pins ralph's git to the repository, waits for the first tool that may
// change a file: an answer runs none.

// TestFirstLookRunsNoProgramOfTheModels: the model's repository (ralph saw
// the project without one) has core.fsmonitor in its .git/config, and in
// the second case a clean filter too, selected by its .gitattributes, for a
// tracked file changed in place at the same size, which git status hashes
// again through the filter. The person's own git runs the payloads there
// (checked first); a one-shot that only says hi must run none of them,
// in its first look or its checkpoints.
func TestFirstLookRunsNoProgramOfTheModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, arm string }{
		// No file mentions a filter: the first look runs without a listing.
		{"fsmonitor", "git config core.fsmonitor '%[1]s'"},
		// A filter is named: the first look waits for the listed guard.
		{"filter", "git config core.fsmonitor '%[1]s' && git config filter.x.clean '%[2]s'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proj, outside, payload := gitAttackDirs(t)
			srv := inlineServer(t, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
			env := gitAttackEnv(t, srv.URL)
			// ralph sees the project without a repository first: the one
			// made next is not known to be the person's.
			if r := ralph(t, proj, env, nil, "say hi"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			arm := strings.NewReplacer("%[1]s", payload("fsmonitor"), "%[2]s", payload("clean")).Replace(tc.arm)
			gitIn(t, proj, "git init -q -b main && printf '* filter=x\\n' > .gitattributes && echo a > a.txt && git add . && git commit -qm mine && "+
				arm+" && printf 'z\\n' > a.txt && touch -d '2020-01-02 03:04:05' a.txt")
			// Armed: the person's own git, reading without writing the
			// index, runs the payloads (the index keeps a.txt's old stat).
			status := exec.Command("git", "status", "--short")
			status.Dir, status.Env = proj, append(cleanEnv(t, gitEnv...), "GIT_OPTIONAL_LOCKS=0")
			if out, err := status.CombinedOutput(); err != nil {
				t.Fatalf("git status: %v\n%s", err, out)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) == 0 {
				t.Fatal("the person's own git status ran no payload: the test proves nothing")
			}
			for _, e := range entries {
				os.Remove(filepath.Join(outside, e.Name()))
			}
			r := ralph(t, proj, env, nil, "say hi")
			if r.code != 0 || r.stdout != "hi\n" {
				t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
			}
			noPayloadRan(t, outside, "a one-shot's first look and checkpoints")
		})
	}
}

// TestAnAnswerRunsOneGitAndAToolWaitsForThePinning records, through a git
// on PATH that logs each start and exit, the gits two one-shots in a fresh
// repository run and when their requests reach the model. The wrapper
// makes the listing of the configuration (git config --list, which pins
// ralph's git to the repository) take two seconds. A one-shot whose model
// only answers runs one git, the first look's status, which its request
// waits for, and no listing: it leaves no trust record and no checkpoint.
// The latest commit subjects are loose objects there, read from the
// repository's files: no git log runs, and the request carries them. A
// one-shot whose model writes a file pins ralph's git before the tool
// runs: the listing starts after the first request and ends before the
// file is written, and the session has its baseline and its turn's
// checkpoint, which undo takes back.
func TestAnAnswerRunsOneGitAndAToolWaitsForThePinning(t *testing.T) {
	t.Parallel()
	realGit := needTool(t, "git", "git")
	dir := gitProjectDir(t)
	bin := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "gits.log")
	// The subcommand follows ralph's -c settings, which the wrapper skips.
	wrapper := "#!/bin/sh\nsub=; skip=\nfor a in \"$@\"; do\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n  case \"$a\" in -c) skip=1;; -*) ;; *) sub=$a; break;; esac\ndone\n" +
		"echo \"$(date +%s%N) start $sub\" >> " + logFile + "\n[ \"$sub\" = config ] && sleep 2\n" +
		realGit + " \"$@\"\nrc=$?\necho \"$(date +%s%N) end $sub\" >> " + logFile + "\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	note := func(what string) {
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err == nil {
			f.WriteString(strconv.FormatInt(time.Now().UnixNano(), 10) + " " + what + "\n")
			f.Close()
		}
	}
	writes := false
	srv := llmtest.NewServerFunc(func(req llmtest.RecordedRequest) llmtest.Response {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !writes:
			note("request")
			return llmtest.Response{Text: "hi"}
		case !strings.Contains(string(req.Body), `"role":"tool"`):
			note("request")
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"made.txt","content":"made\n"}`}}}
		default:
			if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
				note("written")
			}
			return llmtest.Response{Text: "done"}
		}
	})
	t.Cleanup(srv.Close)
	env := cleanEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	record := func() (lines []string, at map[string]int) {
		data, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(strings.TrimSpace(string(data)), "\n")
		at = map[string]int{}
		for i, l := range lines {
			if f := strings.Fields(l); len(f) >= 2 {
				if key := strings.Join(f[1:], " "); at[key] == 0 {
					at[key] = i + 1 // 0: absent
				}
			}
		}
		return lines, at
	}
	trust := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "git-trust")

	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "say hi")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	lines, at := record()
	t.Logf("the gits of a one-shot that only answers, and its request:\n%s", strings.Join(lines, "\n"))
	var gits []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "start" {
			gits = append(gits, f[2])
		}
	}
	if len(gits) != 1 || gits[0] != "status" {
		t.Errorf("an answer ran the gits %q, want the first look's status alone", gits)
	}
	if at["request"] == 0 || at["end status"] == 0 || at["request"] < at["end status"] {
		t.Errorf("the request did not follow the first look's status")
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Recent commits") {
		t.Errorf("the request lacks the latest commit subjects")
	}
	if records, _ := filepath.Glob(filepath.Join(trust, "*.json")); len(records) != 0 {
		t.Errorf("an answer wrote trust records %q", records)
	}
	if cps, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "checkpoints.jsonl")); len(cps) != 0 {
		t.Errorf("an answer took checkpoints: %q", cps)
	}

	mu.Lock()
	writes = true
	mu.Unlock()
	if err := os.Truncate(logFile, 0); err != nil {
		t.Fatal(err)
	}
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "make a file")
	if r.code != 0 || r.stdout != "done\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	lines, at = record()
	t.Logf("the gits of a one-shot whose model writes a file, and its requests:\n%s", strings.Join(lines, "\n"))
	for _, want := range []string{"request", "start config", "end config", "written"} {
		if at[want] == 0 {
			t.Fatalf("no %q in the record", want)
		}
	}
	if at["start config"] < at["request"] {
		t.Errorf("the listing started before the first request: nothing needed it yet")
	}
	if at["written"] < at["end config"] {
		t.Errorf("the file was written before ralph's git was pinned")
	}
	if records, _ := filepath.Glob(filepath.Join(trust, "*.json")); len(records) == 0 {
		t.Errorf("the session that wrote a file wrote no trust record")
	}
	cps, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "checkpoints.jsonl"))
	if len(cps) != 1 {
		t.Fatalf("checkpoint logs %q, want the second session's", cps)
	}
	if data, _ := os.ReadFile(cps[0]); !strings.Contains(string(data), `"baseline"`) || !strings.Contains(string(data), `"turn"`) {
		t.Errorf("the checkpoint log lacks the baseline or the turn:\n%s", data)
	}
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("undo left the model's file: %v", err)
	}
}

// TestAPersonsCommitBeforeTheFirstToolIsNotTheModels: while a one-shot
// waits for its model's first answer, the person commits a file of their
// own. The session's first checkpoint is taken before the model's first
// tool, a command, from the work tree as it is then (the index is no
// longer the one the first look saw), so the turn's checkpoint, which
// looks at the whole work tree after a command, holds the model's file
// alone, and undo takes back that file and leaves the person's commit.
func TestAPersonsCommitBeforeTheFirstToolIsNotTheModels(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	var mu sync.Mutex
	var commitErr error
	committed := false
	srv := llmtest.NewServerFunc(func(req llmtest.RecordedRequest) llmtest.Response {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(string(req.Body), `"role":"tool"`) {
			return llmtest.Response{Text: "done"}
		}
		if !committed {
			committed = true
			cmd := exec.Command("bash", "-c", `printf 'mine\n' > person.txt && git add person.txt && git commit -qm 'the person commits'`)
			cmd.Dir, cmd.Env = dir, cleanEnv(t, personGit...)
			if out, err := cmd.CombinedOutput(); err != nil {
				commitErr = fmt.Errorf("%w: %s", err, out)
			}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "run_command", Arguments: `{"command":"printf 'made\\n' > made.txt"}`}}}
	})
	t.Cleanup(srv.Close)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "make a file")
	if r.code != 0 || r.stdout != "done\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if commitErr != nil {
		t.Fatalf("the person's commit: %v", commitErr)
	}
	d := ralph(t, dir, env, nil, "diff")
	if !strings.Contains(d.stdout, "made.txt") || strings.Contains(d.stdout, "person.txt") {
		t.Errorf("the session's diff is not the model's file alone:\n%s%s", d.stdout, d.stderr)
	}
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("undo left the model's file: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "person.txt")); err != nil || string(data) != "mine\n" {
		t.Errorf("undo took the person's committed file: %q %v", data, err)
	}
}

// hookingDefinition is a project's agent definition (a file the model may
// have written in an earlier session) whose PreToolUse hook, on a
// read-only tool, changes a tracked file.
const hookingDefinition = `---
name: tidy
description: tidies
hooks:
  PreToolUse:
    - matcher: Read
      hooks:
        - type: command
          command: "printf 'HOOKED\\n' >> c.txt"
          timeout: 30
---
You tidy.
`

// TestADefinitionsHookBeforeTheFirstWriteIsTheSessions: ralph --agent
// def:tidy, whose definition's PreToolUse hook on read_file changes c.txt
// (approved by the person); the session has no hooks of its own. A hook
// runs a program before any tool that may change a file, so ralph's git
// is pinned and the baseline taken beside the first request, as with the
// session's own hooks (pinLazily decides from the main agent's whole hook
// set): the hook's change is the session's, and undo takes it back with
// the model's file. Found by attacking the lazy pinning: the definition's
// hooks were not counted, and the change became the baseline.
func TestADefinitionsHookBeforeTheFirstWriteIsTheSessions(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, ".claude", "agents", "tidy.md"), hookingDefinition)
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		n := 0
		for _, m := range r.Request.Messages {
			if m.Role == "tool" {
				n++
			}
		}
		switch n {
		case 0:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "r", Name: "read_file", Arguments: `{"path":"b.txt"}`}}}
		case 1:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"made.txt","content":"made\n"}`}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "hooks", "approve"); r.code != 0 {
		t.Fatalf("approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "-y", "--agent", "def:tidy", "tidy up"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if c, _ := os.ReadFile(filepath.Join(dir, "c.txt")); !strings.Contains(string(c), "HOOKED") {
		t.Fatalf("the hook did not run: %q", c)
	}
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Errorf("undo left made.txt")
	}
	if c, _ := os.ReadFile(filepath.Join(dir, "c.txt")); strings.Contains(string(c), "HOOKED") {
		t.Errorf("undo left the hook's change to c.txt: it was taken as the baseline: %q", c)
	}
}

// TestAHookBetweenTurnsIsTheRequests: the session's own hooks that fire
// outside a turn's tools (at the session's start, at the prompt, when the
// model stops) change a tracked file, and the model only answers, so no
// tool turn is checkpointed. Each hook waits for the baseline, which the
// session's hooks have taken beside the first request, and the run takes
// a checkpoint for it at its end: the change is the request's, and undo
// takes it back. Before, a SessionStart hook ran beside the baseline, and
// on a busy machine its change was taken into it.
func TestAHookBetweenTurnsIsTheRequests(t *testing.T) {
	t.Parallel()
	for _, event := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
		t.Run(event, func(t *testing.T) {
			t.Parallel()
			dir := gitProjectDir(t)
			if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFileT(t, filepath.Join(dir, ".claude", "settings.json"), fmt.Sprintf(
				`{"hooks":{%q:[{"hooks":[{"type":"command","command":"printf 'HOOKED\\n' >> c.txt","timeout":30}]}]}}`, event))
			srv := inlineServer(t, `{"name":"answer","loop":true,"responses":[{"text":"done"}]}`)
			env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
			if r := ralph(t, dir, env, nil, "hooks", "approve"); r.code != 0 {
				t.Fatalf("approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if r := ralph(t, dir, env, nil, "-y", "say done"); r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if c, _ := os.ReadFile(filepath.Join(dir, "c.txt")); !strings.Contains(string(c), "HOOKED") {
				t.Fatalf("the hook did not run: %q", c)
			}
			if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
				t.Fatalf("undo: exit %d\n%s%s", u.code, u.stdout, u.stderr)
			}
			if c, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(c) != "c\n" {
				t.Errorf("undo left the %s hook's change to c.txt: %q", event, c)
			}
		})
	}
}
