package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
)

// The ten tasks of the loop whose records are questioned, in file order
// (the order the loop picks them in). The first three fail their first
// attempt one after another, which trips the circuit breaker whatever
// the timing: the impossible task fails every attempt, and its retries
// can only come between the other two.
const (
	impossibleTask = "an impossible task"
	stuckA         = "stuck at first A"
	stuckB         = "stuck at first B"
	decidingTask   = "a task with a choice"
	slowTask       = "slow task"
	flakyTask      = "flaky task"
)

// brokenBuild is what the flaky task's first attempt leaves in state.txt
// for --verify to print: a long log whose last line says what broke, past
// the head the failure sentence keeps.
const brokenBuild = `for i in $(seq 1 60); do echo "noise line $i of the build log"; done > state.txt; echo "BROKEN: widget count 41" >> state.txt`

// loopRecordsModel is the stand-in for the children of that run. Every
// task but the impossible one ends writing OK to state.txt, which
// --verify checks, and calling complete_task; the slow task takes 2.5 s
// a turn; the task with a choice records a decision first.
func loopRecordsModel() func(llmtest.RecordedRequest) llmtest.Response {
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	runCmd := func(delay int, cmd string) llmtest.Response {
		return llmtest.Response{DelayMS: delay, Text: "working",
			ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": cmd})}}}
	}
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		var id, title, prompt string
		for _, m := range msgs {
			if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				id, title, prompt = sm[1], sm[2], m.Content
				break
			}
		}
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		retry := strings.Contains(prompt, "This is attempt")
		delay := 0
		if title == slowTask {
			delay = 2500
		}
		last := msgs[len(msgs)-1]
		switch {
		case title == impossibleTask && last.Role == "user":
			return runCmd(0, "ls missing-dir")
		case title == impossibleTask:
			return llmtest.Response{Text: "I cannot do " + title}
		case (title == stuckA || title == stuckB) && !retry:
			return llmtest.Response{Text: "stuck: " + title + " needs something I do not have yet"}
		case title == decidingTask && last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "record_decision", Arguments: args(map[string]any{
				"decision": "keep the count in a map", "reason": "lookups by id dominate", "confidence": 0.8,
				"alternatives": []string{"a sorted slice", "a btree"}})}}}
		case title == flakyTask && !retry && last.Role == "user":
			return runCmd(0, brokenBuild)
		case last.Role == "user" || last.Name == "record_decision":
			return runCmd(delay, "echo OK > state.txt")
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{DelayMS: delay, ToolCalls: []llmtest.ToolCall{{Name: "complete_task",
				Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
		}
		return llmtest.Response{DelayMS: delay, Text: "done with " + title}
	}
}

// TestRecordsOfALoopWithRetriesAndABreaker is the must-show of decisions
// with reasons: a ten-task run with failures, retries, a skip and a
// tripped breaker. The report and insights name the slowest and the most
// retried task; decisions.jsonl gives a reason for every retry and skip
// and for each breaker transition; the flaky task's second prompt, as
// the stand-in saw it, holds the end of its first attempt's verify
// output; the agent's own decision is shown with its reason.
func TestRecordsOfALoopWithRetriesAndABreaker(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(loopRecordsModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, numbered(10, map[int]string{1: impossibleTask, 2: stuckA, 3: stuckB, 4: decidingTask, 5: slowTask, 6: flakyTask})...)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "2", "--breaker-cooldown", "1s",
		"--verify", "cat state.txt && grep -qx OK state.txt")
	m := resultLine(t, r.stdout)
	tasks, _ := m["tasks"].(map[string]any)
	if r.code != 1 || tasks["done"] != 9.0 || tasks["failed"] != 1.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	sess := sessionDir(t, dir)
	decs, bad, err := memory.ReadJSONL[memory.DecisionRecord](afero.NewOsFs(), filepath.Join(sess, "decisions.jsonl"))
	if err != nil || bad != 0 {
		t.Fatalf("decisions.jsonl: %v, %d bad lines", err, bad)
	}
	evs, _, err := memory.ReadJSONL[event.Event](afero.NewOsFs(), filepath.Join(sess, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	// Every failed attempt led to a retry or a skip, each with its reason.
	failed := 0
	breakerEvents := 0
	for _, ev := range evs {
		switch {
		case ev.Type == event.TaskChanged && ev.TaskAttempt != nil && ev.TaskAttempt.Error != "":
			failed++
		case ev.Type == event.Breaker:
			breakerEvents++
		}
	}
	var after, breaker []string
	for _, d := range decs {
		switch {
		case d.Kind == "task_retry" || d.Kind == "task_skip" || d.Kind == "task_abort":
			if d.Reason == "" || d.Task == "" {
				t.Errorf("a %s without its reason or task: %+v", d.Kind, d)
			}
			after = append(after, d.Kind+" "+d.Task)
		case strings.HasPrefix(d.Kind, "breaker"):
			if d.Reason == "" {
				t.Errorf("a breaker transition without its reason: %+v", d)
			}
			breaker = append(breaker, strings.TrimPrefix(d.Kind, "breaker_"))
		}
	}
	if failed != 6 || len(after) != failed {
		t.Errorf("%d failed attempts, %d retry or skip decisions: %v", failed, len(after), after)
	}
	if n := strings.Count(strings.Join(after, ","), "task_skip t1"); n != 1 || strings.Count(strings.Join(after, ","), "task_retry") != 5 {
		t.Errorf("after the failures: %v, want five retries and t1 skipped", after)
	}
	for _, d := range decs {
		if d.Kind == "task_skip" && !strings.Contains(d.Reason, "3 attempts failed and --retries 2 allows no more") {
			t.Errorf("the skip's reason: %q", d.Reason)
		}
		if d.Kind == "task_retry" && d.Task == "t6" && !strings.HasPrefix(d.Reason, "verification failed: noise line 1 of the build log") {
			t.Errorf("the flaky task's retry reason: %q", d.Reason)
		}
	}
	// The breaker opened, let one task through and closed; every change
	// is a decision (and a breaker event).
	seq := strings.Join(breaker, " ")
	if len(breaker) != breakerEvents || !regexp.MustCompile(`^open half_open( open half_open)* closed$`).MatchString(seq) {
		t.Errorf("breaker decisions %q, %d breaker events", seq, breakerEvents)
	}

	// The flaky task's second prompt holds the end of the first attempt's
	// verify output, which the failure sentence (the output's head) does
	// not reach.
	seen := false
	for _, req := range srv.Requests() {
		for _, msg := range req.Request.Messages {
			if msg.Role != "user" || !strings.HasPrefix(msg.Content, "Your task (t6 in RALPH_TASKS.md)") || !strings.Contains(msg.Content, "This is attempt 2") {
				continue
			}
			seen = true
			i := strings.Index(msg.Content, "The end of the --verify command's output:")
			if i < 0 || !strings.Contains(msg.Content[i:], "noise line 60 of the build log\nBROKEN: widget count 41\n") {
				t.Fatalf("the retry's prompt lacks the verify output's end:\n%s", msg.Content)
			}
		}
	}
	if !seen {
		t.Fatal("the stand-in never saw the flaky task's second attempt")
	}

	// Insights and the report name the slowest and the most retried task.
	in := ralph(t, dir, env, nil, "insights", "--json")
	var ins struct {
		Slowest     []struct{ ID, Title string } `json:"slowest_tasks"`
		MostRetried []struct {
			ID, Title, State string
			Attempts         int
		} `json:"most_retried_tasks"`
	}
	if err := json.Unmarshal([]byte(in.stdout), &ins); err != nil || in.code != 0 {
		t.Fatalf("insights: exit %d, %v\n%s", in.code, err, in.stdout)
	}
	if len(ins.Slowest) == 0 || ins.Slowest[0].Title != slowTask || ins.Slowest[0].ID != "t5" {
		t.Errorf("slowest: %+v", ins.Slowest)
	}
	if len(ins.MostRetried) != 4 || ins.MostRetried[0].ID != "t1" || ins.MostRetried[0].Attempts != 3 || ins.MostRetried[0].State != "failed" ||
		ins.MostRetried[1].Attempts != 2 {
		t.Errorf("most retried: %+v", ins.MostRetried)
	}
	rep := ralph(t, dir, env, nil, "report")
	for _, want := range []string{
		"Slowest tasks: `t5` slow task",
		"Most retried: `t1` an impossible task (3 attempts, failed)",
		"**task_skip** (`t1`): t1 attempt 3 failed; it is marked failed and the loop goes on without it\n  - why: ",
		"**breaker_open**: closed → open",
		"**agent_decision** (`t4`, by agent ",
		"): keep the count in a map\n  - why: lookups by id dominate\n  - confidence 0.8; alternatives: a sorted slice; a btree\n",
	} {
		if !strings.Contains(rep.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, rep.stdout)
		}
	}
	an := ralph(t, dir, env, nil, "analyze")
	for _, want := range []string{"task_retry 5, task_skip 1", "(0 by the person, 1 by agents)",
		"agent_decision (t4, by agent ", "      why: lookups by id dominate\n", "      confidence 0.8; alternatives: a sorted slice; a btree\n"} {
		if !strings.Contains(an.stdout, want) {
			t.Errorf("ralph analyze lacks %q:\n%s", want, an.stdout)
		}
	}
	if strings.Contains(an.stdout, "task_picked (") {
		t.Errorf("ralph analyze lists the routine picks:\n%s", an.stdout)
	}
}

// TestRunPromptTemplate: --prompt-template writes the prompts the agents
// get, a retry's with what went wrong; prompt_template in the project's
// config does the same; a bad template is one sentence and exit 2 before
// any model call or session.
func TestRunPromptTemplate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	prompts := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
	model := func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		var id, prompt string
		for _, m := range msgs {
			if sm := regexp.MustCompile(`^TASK (t\d+):`).FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				id, prompt = sm[1], m.Content
				break
			}
		}
		last := msgs[len(msgs)-1]
		switch {
		case id == "":
			return llmtest.Response{Text: "no task I know"}
		case last.Role == "user":
			mu.Lock()
			seen = append(seen, prompt)
			mu.Unlock()
			if !strings.Contains(prompt, "attempt 2") {
				return llmtest.Response{Text: "not yet"}
			}
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: fmt.Sprintf(`{"id":%q,"summary":"ok"}`, id)}}}
		}
		return llmtest.Response{Text: "done"}
	}
	srv := llmtest.NewServerFunc(model)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "first thing")
	tmpl := filepath.Join(t.TempDir(), "task.tmpl")
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(tmpl, "TASK {{.Task.ID}}: {{.Task.Title}} (attempt {{.Attempt}}, {{.Date}})\n{{if .LastError}}LAST TIME: {{.LastError}}\n{{end}}")
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--prompt-template", tmpl)
	got := prompts()
	if r.code != 0 || len(got) != 2 {
		t.Fatalf("exit %d, prompts %q\n%s", r.code, got, r.stderr)
	}
	if !regexp.MustCompile(`^TASK t1: first thing \(attempt 1, \d{4}-\d\d-\d\d\)\n$`).MatchString(got[0]) ||
		!strings.HasPrefix(got[1], "TASK t1: first thing (attempt 2, ") ||
		!strings.Contains(got[1], "LAST TIME: the worker finished without completing the task: not yet") {
		t.Errorf("prompts:\n%q\n%q", got[0], got[1])
	}
	state := readFile(t, filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(state, `"prompt_template": "`+tmpl+`"`) {
		t.Errorf("the run configuration does not keep the template for resume:\n%s", state)
	}

	// The project's config names a template inside the project.
	dir2 := t.TempDir()
	writeTasks(t, dir2, "second thing")
	write(filepath.Join(dir2, ".ralph", "task.tmpl"), "TASK {{.Task.ID}}: from the config, attempt {{.Attempt}}\n")
	write(filepath.Join(dir2, ".ralph", "config.toml"), "prompt_template = \".ralph/task.tmpl\"\n")
	r = ralph(t, dir2, env, nil, "--base-url", srv.URL, "-y", "--json", "run")
	if got := prompts(); r.code != 0 || len(got) != 4 || got[2] != "TASK t1: from the config, attempt 1\n" {
		t.Fatalf("config template: exit %d, prompts %q\n%s", r.code, got, r.stderr)
	}

	// A bad template: one sentence, exit 2, nothing asked, no session.
	before := len(srv.Requests())
	for _, c := range []struct{ text, want string }{
		{"Do {{.Task.Titel}}", "ralph: bad run configuration: the prompt template " + tmpl + ":1:10: at <.Task.Titel>: can't evaluate field Titel (the fields are .Task.ID,"},
		{"Do {{.Task.Title", "ralph: bad run configuration: the prompt template " + tmpl + ":1: unclosed action"},
	} {
		dir3 := t.TempDir()
		writeTasks(t, dir3, "third thing")
		write(tmpl, c.text)
		r := ralph(t, dir3, env, nil, "--base-url", srv.URL, "-y", "run", "--prompt-template", tmpl)
		if r.code != 2 || !strings.HasPrefix(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q", c.text, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir3, ".ralph", "sessions")); err == nil {
			entries, _ := os.ReadDir(filepath.Join(dir3, ".ralph", "sessions"))
			if len(entries) > 0 {
				t.Errorf("a session was made for a run that never started: %v", entries)
			}
		}
	}
	dir4 := t.TempDir()
	writeTasks(t, dir4, "fourth thing")
	if r := ralph(t, dir4, env, nil, "--base-url", srv.URL, "-y", "run", "--prompt-template", filepath.Join(dir, "nope.tmpl")); r.code != 2 ||
		!strings.Contains(r.stderr, "nope.tmpl does not exist") {
		t.Errorf("a missing template: exit %d, %q", r.code, r.stderr)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("bad templates made %d model requests", n)
	}
}
