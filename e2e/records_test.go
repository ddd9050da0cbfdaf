package e2e

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// recordsModel scripts the children of a ten-task run whose record has
// something to say: "slow task" takes three seconds a turn (under load the first task, which also waits for the bring-up, took 4.4 s, more than 1.2 s a turn made of the slow one); "flaky task"
// leaves the project broken (state.txt says BROKEN, which --verify
// refuses) at its first attempt and mends it at its second; "an
// impossible task" runs a command that fails and never completes. Every
// other task writes OK to state.txt and completes.
func recordsModel() func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		var id, title, prompt string
		for _, m := range msgs {
			if m.Role == "user" {
				if sm := taskPromptRe.FindStringSubmatch(m.Content); sm != nil {
					id, title, prompt = sm[1], sm[2], m.Content
				}
			}
		}
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		delay := 0
		if title == "slow task" {
			delay = 3000
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		runCmd := func(cmd string) llmtest.Response {
			return llmtest.Response{DelayMS: delay, Text: "working",
				ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": cmd})}}}
		}
		last := msgs[len(msgs)-1]
		switch {
		case last.Role == "user" && title == "an impossible task":
			return runCmd("ls missing-dir")
		case title == "an impossible task":
			return llmtest.Response{Text: "I cannot do " + title}
		case last.Role == "user" && title == "flaky task" && !strings.Contains(prompt, "This is attempt"):
			return runCmd("echo BROKEN > state.txt")
		case last.Role == "user":
			return runCmd("echo OK > state.txt")
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{DelayMS: delay, ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
		}
		return llmtest.Response{DelayMS: delay, Text: "done with " + title}
	}
}

// TestRecordsOfATenTaskRun runs ten tasks with failures and retries, then
// asks the records: the report and insights must name the slowest and the
// most retried task, and the HTML report, opened in headless Chromium,
// must draw one bar per task.
func TestRecordsOfATenTaskRun(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(recordsModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, numbered(10, map[int]string{3: "slow task", 6: "flaky task", 8: "an impossible task"})...)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "2",
		"--verify", "cat state.txt && grep -qx OK state.txt")
	m := resultLine(t, r.stdout)
	tasks, _ := m["tasks"].(map[string]any)
	if r.code != 1 || tasks["done"] != 9.0 || tasks["failed"] != 1.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}

	// The children's events name the task and attempt they work on, and
	// what each spent.
	events, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "events.jsonl"))
	if !regexp.MustCompile(`"type":"agent_spawned"[^\n]*"task":"t6","task_attempt":\{"number":2\}`).Match(events) ||
		!regexp.MustCompile(`"type":"agent_finished"[^\n]*"task":"t3","usage":\{"input_tokens":\d+`).Match(events) {
		t.Errorf("events.jsonl does not tie agents to tasks:\n%.3000s", events)
	}

	r = ralph(t, dir, env, nil, "insights", "--json")
	if r.code != 0 {
		t.Fatalf("insights: exit %d\n%s", r.code, r.stderr)
	}
	var in struct {
		Slowest []struct {
			ID, Title string
			Attempts  int
		} `json:"slowest_tasks"`
		MostRetried []struct {
			ID, Title, State string
			Attempts         int
		} `json:"most_retried_tasks"`
		FailingCommands []struct {
			Command        string
			Runs, Failures int
		} `json:"failing_commands"`
		CostByTask []struct {
			ID      string
			CostUSD *float64 `json:"cost_usd"`
		} `json:"cost_by_task"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &in); err != nil {
		t.Fatalf("insights JSON: %v\n%s", err, r.stdout)
	}
	if len(in.Slowest) == 0 || in.Slowest[0].Title != "slow task" {
		t.Errorf("slowest: %+v", in.Slowest)
	}
	if len(in.MostRetried) != 2 || in.MostRetried[0].Title != "an impossible task" || in.MostRetried[0].Attempts != 3 ||
		in.MostRetried[0].State != "failed" || in.MostRetried[1].Title != "flaky task" || in.MostRetried[1].Attempts != 2 {
		t.Errorf("most retried: %+v", in.MostRetried)
	}
	if len(in.FailingCommands) < 2 || in.FailingCommands[0].Command != "ls missing-dir" || in.FailingCommands[0].Failures != 3 {
		t.Errorf("failing commands: %+v", in.FailingCommands)
	}
	if len(in.CostByTask) != 10 || in.CostByTask[0].CostUSD == nil || *in.CostByTask[0].CostUSD <= 0 {
		t.Errorf("cost by task: %+v", in.CostByTask)
	}
	text := ralph(t, dir, env, nil, "insights")
	if !regexp.MustCompile(`slowest tasks\n  t3 slow task +\S+ +1 attempt +done`).MatchString(text.stdout) ||
		!regexp.MustCompile(`most retried tasks\n  t8 an impossible task +3 attempts +failed\n  t6 flaky task +2 attempts +done`).MatchString(text.stdout) {
		t.Errorf("insights text:\n%s", text.stdout)
	}

	rep := ralph(t, dir, env, nil, "report")
	for _, want := range []string{
		"From this session's records: 10 tasks: 9 done, 1 failed.",
		"Slowest tasks: `t3` slow task",
		"Most retried: `t8` an impossible task (3 attempts, failed), `t6` flaky task (2 attempts, done)",
		"`t6` attempt 1: **retry**",
		"verification failed: BROKEN",
	} {
		if !strings.Contains(rep.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, rep.stdout)
		}
	}

	h := ralph(t, dir, env, nil, "report", "--html")
	page := strings.TrimSpace(h.stdout)
	if h.code != 0 || !strings.HasSuffix(page, "report.html") {
		t.Fatalf("report --html: exit %d, %q\n%s", h.code, h.stdout, h.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `<rect class="bar"`); n != 10 {
		t.Errorf("the HTML file has %d task bars, want 10", n)
	}
	checkInChromium(t, page, 10)
}

// checkInChromium opens the page in headless Chromium: the DOM it builds
// must hold the timeline's SVG with one bar per task, and its screenshot
// must show something (not one colour).
func checkInChromium(t *testing.T, page string, tasks int) {
	t.Helper()
	needChromium(t)
	bin := browser.Find()
	profile := t.TempDir()
	chrome := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--disable-dev-shm-usage", "--user-data-dir=" + profile}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+profile)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return out
	}
	url := "file://" + page
	dom := string(chrome("--dump-dom", url))
	if !strings.Contains(dom, `<svg id="timeline"`) {
		t.Fatalf("Chromium's DOM has no timeline SVG:\n%.2000s", dom)
	}
	if n := strings.Count(dom, `<g class="task"`); n != tasks {
		t.Errorf("Chromium's DOM has %d task rows, want %d", n, tasks)
	}
	if n := len(regexp.MustCompile(`<rect class="bar"`).FindAllString(dom, -1)); n != tasks {
		t.Errorf("Chromium's DOM has %d task bars, want %d", n, tasks)
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	chrome("--screenshot="+shot, "--window-size=1200,1400", "--hide-scrollbars", url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	colours := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	// A blank page is one colour; text alone brings a few dozen shades of
	// grey; the timeline's coloured bars bring more.
	if len(colours) < 20 {
		t.Errorf("the screenshot has %d colours: blank", len(colours))
	}
	// Green (done) and red (failed) attempt bars must be on screen.
	near := func(c [3]uint32, r, g, bl uint32) bool {
		d := func(a, b uint32) bool { return a+3 >= b && b+3 >= a }
		return d(c[0], r) && d(c[1], g) && d(c[2], bl)
	}
	green, red := false, false
	for c := range colours {
		green = green || near(c, 0x2e, 0x9d, 0x57)
		red = red || near(c, 0xd6, 0x45, 0x45)
	}
	if !green || !red {
		t.Errorf("the screenshot lacks the timeline's colours (done green %v, failed red %v)", green, red)
	}
}

// TestReportOfAnOlderSession: session 1 works three tasks; tasks are
// added and session 2 works them; session 1's report lists its own three
// only, and session 2's the new ones.
func TestReportOfAnOlderSession(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := cleanEnv(t)
	writeTasks(t, dir, "alpha", "beta", "gamma")
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("session 1: exit %d\n%s", r.code, r.stderr)
	}
	first := filepath.Base(sessionDir(t, dir))
	f, err := os.OpenFile(filepath.Join(dir, "RALPH_TASKS.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "- [ ] delta\n- [ ] epsilon\n")
	f.Close()
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("session 2: exit %d\n%s", r.code, r.stderr)
	}
	if ids, _ := os.ReadDir(filepath.Join(dir, ".ralph", "sessions")); len(ids) != 2 || ids[0].Name() != first {
		t.Fatalf("sessions after session 2: %v", ids)
	}
	has := func(report string, titles ...string) []string {
		var found []string
		for _, title := range titles {
			if regexp.MustCompile(`(?m)^- ` + title + " `t\\d+`$").MatchString(report) {
				found = append(found, title)
			}
		}
		return found
	}
	all := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	r1 := ralph(t, dir, env, nil, "report", first)
	if got := has(r1.stdout, all...); strings.Join(got, ",") != "alpha,beta,gamma" {
		t.Errorf("session 1's report lists %v:\n%s", got, r1.stdout)
	}
	if !strings.Contains(r1.stdout, "From this session's records: 3 tasks: 3 done.") {
		t.Errorf("session 1's report:\n%s", r1.stdout)
	}
	r2 := ralph(t, dir, env, nil, "report")
	if got := has(r2.stdout, all...); strings.Join(got, ",") != "delta,epsilon" {
		t.Errorf("session 2's report lists %v:\n%s", got, r2.stdout)
	}
	h := ralph(t, dir, env, nil, "report", first, "--html", "-o", "one.html")
	data, err := os.ReadFile(filepath.Join(dir, "one.html"))
	if h.code != 0 || err != nil {
		t.Fatalf("report --html -o: exit %d, %v\n%s", h.code, err, h.stderr)
	}
	if n := strings.Count(string(data), `<g class="task"`); n != 3 || strings.Contains(string(data), "epsilon") {
		t.Errorf("session 1's HTML report has %d task rows (want 3) or names a later task", n)
	}
	// Both sessions side by side, and insights over both.
	c := ralph(t, dir, env, nil, "compare", "--last", "2", "--json")
	var cmp struct {
		Sessions []struct {
			SessionID string `json:"session_id"`
		}
		Deltas map[string]any
	}
	if err := json.Unmarshal([]byte(c.stdout), &cmp); err != nil || len(cmp.Sessions) != 2 || cmp.Sessions[0].SessionID != first || cmp.Deltas["turns"] == nil {
		t.Errorf("compare --last 2: %v\n%s\n%s", err, c.stdout, c.stderr)
	}
}
