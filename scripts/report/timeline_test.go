package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
)

const idLoop = "20261121T020000Z-cccccccccccc"

const evilTitle = `Set up <script>alert("x")</script> & more`

// fixtureLoop is a task run with every record a timeline reads:
//
//	t1 (evilTitle)   0–10 s, done at the first attempt, verify passed
//	t2 "Fix the flaky test"  attempts 10–13 and 15–30 failed verification
//	                 and were retried, 30–31 failed for good: 19 s of work
//	t3 "Write docs"  31–71 s, done: the slowest; its agent_spawned predates
//	                 the task field, so its task comes from the prompt
//
// Each attempt's agent spent 100 in / 20 out at $0.01.
func fixtureLoop(t testing.TB, fs afero.Fs) {
	t.Helper()
	s, err := memory.CreateSession(fs, root, idLoop, memory.State{Status: memory.StatusRunning, Mode: "run", Model: "gpt-test",
		StartedAt: at(0), Run: &memory.RunConfig{Verify: "go test ./..."}})
	must(t, err)
	usage := conversation.Usage{InputTokens: 100, OutputTokens: 20}
	cost := 0.01
	var evs []event.Event
	add := func(e event.Event) { e.SessionID = idLoop; evs = append(evs, e) }
	begin := func(sec float64, id, title string, n int) {
		e := ev(event.TaskChanged, sec, 0)
		e.Text, e.Output, e.Task, e.TaskAttempt = id+" in_progress", title, id, &event.TaskAttempt{Number: n}
		add(e)
	}
	end := func(sec float64, id, title, state string, n int, verifyOK *bool, failure string) {
		e := ev(event.TaskChanged, sec, 0)
		e.Text, e.Output, e.Task = id+" "+state, title, id
		e.TaskAttempt = &event.TaskAttempt{Number: n, Error: failure}
		if verifyOK != nil {
			out := "ok  \tpkg\t0.1s"
			if !*verifyOK {
				out = "--- FAIL: TestX\nFAIL"
			}
			e.TaskAttempt.Verify = &event.VerifyRun{OK: *verifyOK, DurationMS: 500, Output: out}
		}
		e.IsError = state != "done"
		e.Usage, e.CostUSD = &usage, &cost
		add(e)
	}
	spawn := func(sec float64, agent, task string, n int, prompt string) {
		e := ev(event.AgentSpawned, sec, 0)
		e.AgentID, e.Task, e.Text = agent, task, prompt
		if n > 0 {
			e.TaskAttempt = &event.TaskAttempt{Number: n}
		}
		add(e)
	}
	finish := func(sec float64, agent string, failed bool) {
		e := ev(event.AgentFinished, sec, 0)
		e.AgentID, e.IsError, e.Usage, e.CostUSD = agent, failed, &usage, &cost
		add(e)
	}
	cmd := func(sec float64, agent, id, command, out string, failed bool) {
		c := call(sec, 1, id, "run_command", `{"command":`+quoteJSON(command)+`}`)
		c.AgentID = agent
		add(c)
		r := res(sec+0.5, 1, id, "run_command", out, failed)
		r.AgentID = agent
		add(r)
	}
	yes, no := true, false
	begin(0, "t1", evilTitle, 1)
	spawn(0, "agent-0.1", "t1", 1, "Your task (t1 in RALPH_TASKS.md): x")
	cmd(1, "agent-0.1", "k1", "go build ./...", "", false)
	finish(9, "agent-0.1", false)
	end(10, "t1", evilTitle, "done", 1, &yes, "")

	begin(10, "t2", "Fix the flaky test", 1)
	spawn(10, "agent-0.2", "t2", 1, "Your task (t2 in RALPH_TASKS.md): Fix the flaky test")
	cmd(11, "agent-0.2", "k2", "go test ./...", "--- FAIL: TestX (0.01s)\nexit status 1", true)
	finish(12, "agent-0.2", false)
	end(13, "t2", "Fix the flaky test", "open", 1, &no, "verification failed: --- FAIL: TestX at /tmp/a/b_test.go:12")
	begin(15, "t2", "Fix the flaky test", 2)
	spawn(15, "agent-0.3", "t2", 2, "Your task (t2 in RALPH_TASKS.md): Fix the flaky test")
	cmd(16, "agent-0.3", "k3", "go test ./...", "--- FAIL: TestX (0.02s)\nexit status 1", true)
	finish(29, "agent-0.3", false)
	end(30, "t2", "Fix the flaky test", "open", 2, &no, "verification failed: --- FAIL: TestX at /tmp/c/d_test.go:99")
	begin(30, "t2", "Fix the flaky test", 3)
	spawn(30, "agent-0.4", "t2", 3, "Your task (t2 in RALPH_TASKS.md): Fix the flaky test")
	finish(31, "agent-0.4", true)
	end(31, "t2", "Fix the flaky test", "failed", 3, nil, "the worker finished without completing the task")

	begin(31, "t3", "Write docs", 1)
	spawn(31, "agent-0.5", "", 0, "Your task (t3 in RALPH_TASKS.md): Write docs")
	files := ev(event.FilesChanged, 70, 0)
	files.Task, files.Files = "t3", []git.FileChange{{Path: "README.md", Added: 10, Deleted: 2}}
	add(files)
	files.Files = []git.FileChange{{Path: "README.md", Added: 1}, {Path: "docs/a.md", Added: 3}}
	add(files)
	finish(70, "agent-0.5", false)
	end(71, "t3", "Write docs", "done", 1, &yes, "")
	for _, e := range evs {
		must(t, s.AppendEvent(e))
	}
	for _, r := range []memory.ErrorRecord{
		{Time: at(11.5), Kind: "tool", ToolName: "run_command", Message: "exit status 1"},
		{Time: at(13), Kind: "task", Message: "t2: verification failed: --- FAIL: TestX at /tmp/a/b_test.go:12"},
		{Time: at(16.5), Kind: "tool", ToolName: "run_command", Message: "exit status 1"},
		{Time: at(30), Kind: "task", Message: "t2: verification failed: --- FAIL: TestX at /tmp/c/d_test.go:99"},
		{Time: at(31), Kind: "task", Message: "t2: the worker finished without completing the task"},
	} {
		must(t, s.AppendLog(memory.ErrorsLog, r))
	}
	must(t, s.SaveState(func(st *memory.State) {
		st.Status, st.Iteration = memory.StatusCompleted, 5
		st.Usage = conversation.Usage{InputTokens: 500, OutputTokens: 100}
		st.CostUSD = ptr(0.05)
	}))
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestTimelineFromRecords(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureLoop(t, fs)
	// Today's task file holds other tasks; the timeline must not see them.
	writeFile(t, fs, root+"/"+memory.TasksFile, tasksMD)
	rec, err := Load(fs, root, idLoop)
	must(t, err)
	tl := rec.Timeline
	if len(tl.Tasks) != 3 {
		t.Fatalf("%d tasks, want 3: %+v", len(tl.Tasks), tl.Tasks)
	}
	t1, t2, t3 := tl.Tasks[0], tl.Tasks[1], tl.Tasks[2]
	if t1.ID != "t1" || t1.Title != evilTitle || t1.State != "done" || len(t1.Attempts) != 1 || t1.DurationMS != 10000 {
		t.Errorf("t1: %+v", t1)
	}
	if t1.Commands != 1 || t1.FailedCmds != 0 || len(t1.Verify) != 1 || !t1.Verify[0].OK {
		t.Errorf("t1 commands and verify: %+v", t1)
	}
	if t2.State != "failed" || len(t2.Attempts) != 3 || t2.DurationMS != 19000 || t2.FailedCmds != 2 {
		t.Errorf("t2: %+v", t2)
	}
	var outcomes []string
	for _, a := range t2.Attempts {
		outcomes = append(outcomes, a.Outcome)
	}
	if strings.Join(outcomes, ",") != "retry,retry,failed" || t2.Attempts[1].Agent != "agent-0.3" {
		t.Errorf("t2 attempts: %+v", t2.Attempts)
	}
	if t2.InputTokens != 300 || t2.OutputTokens != 60 || t2.CostUSD == nil || *t2.CostUSD < 0.0299 || *t2.CostUSD > 0.0301 {
		t.Errorf("t2 spent %d/%d %v, want 300/60 $0.03", t2.InputTokens, t2.OutputTokens, deref(t2.CostUSD))
	}
	if !strings.Contains(t2.Attempts[0].Error, "b_test.go:12") || t2.Start != at(10) || t2.End != at(31) {
		t.Errorf("t2 error and span: %+v", t2)
	}
	if t3.Attempts[0].Agent != "agent-0.5" || t3.DurationMS != 40000 {
		t.Errorf("t3's agent comes from its prompt: %+v", t3)
	}
	if len(t3.Files) != 2 || t3.Files[0] != (git.FileChange{Path: "README.md", Added: 11, Deleted: 2}) {
		t.Errorf("t3 files: %+v", t3.Files)
	}
	if len(tl.Agents) != 5 || tl.Agents[4].Task != "t3" || !tl.Agents[3].Failed {
		t.Errorf("agents: %+v", tl.Agents)
	}
	// Two run_command calls of t2 failed, and two of the four verify runs.
	verify := 0
	for _, c := range tl.Commands {
		if c.Agent == VerifyAgent {
			verify++
			if c.Command != "go test ./..." {
				t.Errorf("verify command %q", c.Command)
			}
		}
	}
	if verify != 4 || len(tl.Commands) != 7 {
		t.Errorf("%d verify runs in %d commands: %+v", verify, len(tl.Commands), tl.Commands)
	}
}

func TestInsightsNameTheSlowestAndTheMostRetried(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureLoop(t, fs)
	rec, err := Load(fs, root, idLoop)
	must(t, err)
	in := ComputeInsights(rec)
	if len(in.Slowest) != 3 || in.Slowest[0].ID != "t3" || in.Slowest[1].ID != "t2" {
		t.Errorf("slowest: %+v", in.Slowest)
	}
	if len(in.MostRetried) != 1 || in.MostRetried[0].ID != "t2" || in.MostRetried[0].Attempts != 3 {
		t.Errorf("most retried: %+v", in.MostRetried)
	}
	if len(in.FailingCommands) != 1 || in.FailingCommands[0] != (CommandStat{Command: "go test ./...", Runs: 6, Failures: 4, LastFailure: "FAIL"}) {
		t.Errorf("failing commands: %+v", in.FailingCommands)
	}
	// The two verification failures differ only in path and line.
	p := in.ErrorPatterns
	if len(p) != 3 || p[0].Count != 2 || p[1].Count != 2 {
		t.Fatalf("error patterns: %+v", p)
	}
	var verifyPattern *ErrorPattern
	for i := range p {
		if strings.Contains(p[i].Pattern, "verification failed") {
			verifyPattern = &p[i]
		}
	}
	if verifyPattern == nil || verifyPattern.Pattern != "t<n>: verification failed: --- FAIL: TestX at <path>:<n>" || verifyPattern.Kinds["task"] != 2 {
		t.Errorf("verification pattern: %+v", verifyPattern)
	}
	if in.CostByTask[0].ID != "t2" {
		t.Errorf("cost by task: %+v", in.CostByTask)
	}
	// Five agents at $0.01; the coordinator spent nothing of its own.
	if len(in.CostByAgent) != 5 {
		t.Errorf("cost by agent: %+v", in.CostByAgent)
	}
	txt := in.Text()
	for _, want := range []string{"slowest tasks\n  t3 Write docs", "most retried tasks\n  t2 Fix the flaky test  3 attempts  failed",
		"go test ./...  4/6 failed", "2×  task 2"} {
		if !strings.Contains(txt, want) {
			t.Errorf("insights text lacks %q:\n%s", want, txt)
		}
	}
}

func TestErrorKey(t *testing.T) {
	for _, c := range [][2]string{
		{"open /home/me/x.go: no such file", "open <path>: no such file"},
		{"t12: verification failed: exit status 2", "t<n>: verification failed: exit status <n>"},
		{"commit deadbeef12 not found", "commit <hex> not found"},
		{"request 123e4567-e89b-12d3-a456-426614174000 failed", "request <id> failed"},
		{"HTTP 429:   rate\nlimited, retry in 2.5s", "HTTP <n>: rate limited, retry in <n>s"},
		{"edit_file: old_string not found in ./pkg/a.go", "edit_file: old_string not found in <path>"},
		{"cafe is open", "cafe is open"},
	} {
		if got := ErrorKey(c[0]); got != c[1] {
			t.Errorf("ErrorKey(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestReportShowsTheSessionsOwnTimeline(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureLoop(t, fs)
	writeFile(t, fs, root+"/"+memory.TasksFile, tasksMD)
	md, _, err := Report(fs, root, idLoop, t0)
	must(t, err)
	for _, want := range []string{
		"## Tasks\n\nFrom this session's records: 3 tasks: 2 done, 1 failed.\n",
		"### Failed (1)\n\n- Fix the flaky test `t2`\n",
		"## Task timeline\n",
		"| `t2` Fix the flaky test | failed | 3 | 00:48:18 | 00:48:39 | 19s | 360 | $0.03 | 2 (2 failed) | 0/2 passed | 0 |\n",
		"- `t2` attempt 1: **retry** after 3s (agent-0.2): verification failed: --- FAIL: TestX at /tmp/a/b_test.go:12\n",
		"- Slowest tasks: `t3` Write docs (40s)",
		"- Most retried: `t2` Fix the flaky test (3 attempts, failed)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Set up the module") || strings.Contains(md, "Write the README") {
		t.Errorf("the report lists today's task file:\n%s", md)
	}
	if strings.Contains(md, "<script>") {
		t.Errorf("a title's markup reached the markdown report unescaped:\n%s", md)
	}
}

func TestHTMLReportIsSelfContainedAndEscaped(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureLoop(t, fs)
	path, err := HTMLReport(fs, root, idLoop, "", t0)
	must(t, err)
	if path != memory.SessionDir(root, idLoop)+"/"+HTMLReportFile {
		t.Errorf("path %s", path)
	}
	data, err := afero.ReadFile(fs, path)
	must(t, err)
	page := string(data)
	if n := strings.Count(page, `<g class="task"`); n != 3 {
		t.Errorf("%d task rows, want 3", n)
	}
	if n := len(regexp.MustCompile(`<rect class="bar"`).FindAllString(page, -1)); n != 3 {
		t.Errorf("%d task bars, want one per task (3)", n)
	}
	if n := strings.Count(page, `<rect class="attempt `); n != 5 {
		t.Errorf("%d attempt segments, want 5", n)
	}
	if strings.Contains(page, "<script") || !strings.Contains(page, "Set up &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more") {
		t.Errorf("the task title is not escaped")
	}
	// Nothing is loaded from anywhere: the only URL is the SVG namespace.
	for _, bad := range []string{"src=", "href=", "@import", "url(", "<link", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if urls := regexp.MustCompile(`https?://[^"\s]+`).FindAllString(page, -1); len(urls) != 1 || urls[0] != "http://www.w3.org/2000/svg" {
		t.Errorf("URLs in the page: %v", urls)
	}
	for _, want := range []string{`id="errors"`, "Most retried tasks", "verification failed", `data-task="t2"`, "agent-0.5 · t3"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
