package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// sessionPage opens, through ralph serve's printed URL, the page of the
// one session of the project at dir.
func sessionPage(t *testing.T, dir string, env []string) (*browser.Page, string) {
	t.Helper()
	page := browser.Open(t, serveURL(t, dir, env))
	id := filepath.Base(sessionDir(t, dir))
	page.WaitText("body", id, 20*time.Second)
	page = page.OpenTab(page.Eval(`document.querySelector('a[href$="/` + id + `"]').href`).(string))
	page.WaitJS(`document.getElementById("panels") !== null`, 20*time.Second)
	return page, id
}

// assertPageInert fails when the page holds anything but ralph's own
// scripts that could run, opened a dialog or logged an error.
func assertPageInert(t *testing.T, page *browser.Page) {
	t.Helper()
	if live := page.ScriptCapable(`script[src^="/assets/"]`); len(live) > 0 {
		t.Errorf("the page's DOM holds what could run script: %q", live)
	}
	page.Eval(`new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`)
	if d := page.Dialogs(); len(d) > 0 {
		t.Errorf("the page opened dialogs: %+v", d)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserServeCheckpointDiffEqualsRalphDiff: a one-shot request of
// two model steps writes a file whose name holds a <script> (its content
// an <img onerror> and a javascript: link) and edits another; the
// session's page in Chromium shows the request's checkpoint with a diff
// whose text (read from the DOM) is byte for byte what the command the
// page names prints (ralph diff --request N), which is also what ralph
// diff prints for the last request; nothing in it runs.
func TestBrowserServeCheckpointDiffEqualsRalphDiff(t *testing.T) {
	t.Parallel()
	needChromium(t)
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	fileName := "new <script>alert(1).txt"
	scenario := toolScenario(t, "diff", [][]toolCall{
		{{name: "write_file", args: args(map[string]string{"path": fileName, "content": injectImg + "\n" + injectLink + "\n"})}},
		{{name: "edit_file", args: args(map[string]string{"path": "a.txt", "old_string": "two", "new_string": "2 " + injectImg})}},
	}, "Done.")
	srv := inlineServer(t, scenario)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm start`)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "write the file and edit a.txt"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	page, id := sessionPage(t, dir, env)
	page.WaitJS(`document.querySelector("#panels details.checkpoint pre.diff") !== null`, 20*time.Second)
	var shown struct {
		Command, Diff, What string
		Files               []string
		Classes             []string
	}
	page.EvalInto(`(() => {
		const c = document.querySelector("#panels details.checkpoint");
		return {Command: c.querySelector(".cmd").textContent, Diff: c.querySelector("pre.diff").textContent,
			What: c.querySelector(".what").textContent,
			Files: [...c.querySelectorAll(".files li")].map(li => li.textContent),
			Classes: [...c.querySelectorAll("pre.diff span")].map(s => s.className)};
	})()`, &shown)
	fields := strings.Fields(shown.Command)
	if len(fields) != 5 || fields[0] != "ralph" || fields[1] != "diff" || fields[2] != id || fields[3] != "--request" {
		t.Fatalf("the checkpoint names %q, want ralph diff %s --request N", shown.Command, id)
	}
	r := ralph(t, dir, env, nil, fields[1:]...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s", shown.Command, r.code, r.stderr)
	}
	if shown.Diff != r.stdout {
		t.Errorf("the page's diff differs from %s:\npage:\n%s\nralph diff:\n%s", shown.Command, shown.Diff, r.stdout)
	}
	if last := ralph(t, dir, env, nil, "diff"); last.stdout != r.stdout {
		t.Errorf("ralph diff (the last request) differs from %s:\n%s", shown.Command, last.stdout)
	}
	for _, want := range []string{fileName, "+2 " + injectImg, "+" + injectLink} {
		if !strings.Contains(shown.Diff, want) {
			t.Errorf("the diff does not show %q as text:\n%s", want, shown.Diff)
		}
	}
	if strings.Join(shown.Files, "\n") != strings.Join([]string{fileName, "a.txt"}, "\n") &&
		strings.Join(shown.Files, "\n") != strings.Join([]string{"a.txt", fileName}, "\n") {
		t.Errorf("the checkpoint lists the files %q", shown.Files)
	}
	classes := strings.Join(shown.Classes, " ")
	for _, want := range []string{"head", "hunk", "add", "del"} {
		if !strings.Contains(" "+classes+" ", " "+want+" ") {
			t.Errorf("no diff line is classed %q: %s", want, classes)
		}
	}
	assertPageInert(t, page)
}

// TestBrowserServeGraphShowsStatusGraphOrder: a plan whose tasks wait on
// each other and on priorities, written out of the order they can run
// in, is shown on a session's page in Chromium in the order ralph status
// --graph prints, each with its status and what it waits on; a title
// holding a <script> is text.
func TestBrowserServeGraphShowsStatusGraphOrder(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := inlineServer(t, `{"name":"hello","responses":[{"text":"hello"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	plan := "# Tasks\n\n" +
		"- [ ] deploy it <!-- ralph:id=deploy depends=build,test -->\n" +
		"- [ ] test it <!-- ralph:id=test depends=build -->\n" +
		"- [ ] write docs " + injectScript + " <!-- ralph:id=docs priority=200 -->\n" +
		"- [x] set up <!-- ralph:id=setup -->\n" +
		"- [ ] build it <!-- ralph:id=build depends=setup -->\n" +
		"- [ ] the urgent one <!-- ralph:id=urgent priority=1 -->\n" +
		"- [ ] lint <!-- ralph:id=lint -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "say hello"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := ralph(t, dir, env, nil, "status", "--graph", "--json")
	if r.code != 0 {
		t.Fatalf("status --graph: exit %d\n%s", r.code, r.stderr)
	}
	var graph struct {
		Order []struct {
			ID      string   `json:"id"`
			Title   string   `json:"title"`
			Depends []string `json:"depends"`
		} `json:"order"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &graph); err != nil {
		t.Fatalf("status --graph --json: %v\n%s", err, r.stdout)
	}
	var want []string
	for _, s := range graph.Order {
		want = append(want, s.ID+" | "+s.Title+" | open | "+strings.Join(s.Depends, ", "))
	}
	page, _ := sessionPage(t, dir, env)
	var got []string
	page.EvalInto(`[...document.querySelectorAll("#panels ol.graph li")].map(li =>
		[li.dataset.task, li.querySelector(".title").textContent, li.querySelector(".status").textContent,
		 (li.querySelector(".deps")?.textContent || "").replace(/^after /, "")].join(" | "))`, &got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the page's order:\n%s\nralph status --graph's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The plan's file order is not the graph's, so the test tells them
	// apart.
	if len(got) < 6 || strings.HasPrefix(got[0], "deploy") {
		t.Errorf("the graph is not what the plan makes it: %q", got)
	}
	var done string
	page.EvalInto(`document.querySelector('#panels ul.rest li[data-task="setup"] .status')?.textContent || ""`, &done)
	if done != "done" {
		t.Errorf("the done task shows %q, want done", done)
	}
	assertPageInert(t, page)
}

// TestBrowserServePanelsFollowALiveRun: the page of a ralph run, open in
// Chromium while the model holds the first task's answer back, shows the
// task in progress and its child agent running; once the model answers,
// the panels show the task done, the next task's agent and the task's
// checkpoint, without a reload of the page. With RALPH_SCREENSHOTS=1 it
// writes docs/images/web-panels.png.
func TestBrowserServePanelsFollowALiveRun(t *testing.T) {
	t.Parallel()
	needChromium(t)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	model := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		<-release
		return model(r)
	})
	t.Cleanup(srv.Close)
	// Cleanups run last first: the model is let go before its server
	// waits for its requests to end.
	t.Cleanup(open)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTasks(t, dir, "one", "two", "three")
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm tasks`)
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	page, _ := sessionPage(t, dir, env)
	// The first task waits on the model: it is being worked, by an agent
	// that runs.
	page.WaitJS(`document.querySelector('#panels .agents li .s-running') !== null`, 20*time.Second)
	var first struct {
		Agents int
		Status string
	}
	page.EvalInto(`({Agents: document.querySelectorAll("#panels .agents li").length,
		Status: document.querySelector('#panels li[data-task] .status')?.textContent || ""})`, &first)
	if first.Agents != 1 {
		t.Fatalf("while the first task waits, the page shows %d agents, want 1", first.Agents)
	}
	// A mark a reload would wipe.
	page.Eval(`window.__sameDocument = true`)
	open()
	page.WaitJS(`document.querySelectorAll("#panels .agents li").length >= 2`, 60*time.Second)
	page.WaitJS(`[...document.querySelectorAll("#panels li[data-task] .status")].some(s => s.textContent === "done")`, 60*time.Second)
	if code, _ := exitCode(t, run, 90*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	page.WaitJS(`document.querySelectorAll('#panels li[data-task] .status').length === 3 &&
		[...document.querySelectorAll('#panels li[data-task] .status')].every(s => s.textContent === "done")`, 30*time.Second)
	page.WaitJS(`document.querySelectorAll("#panels details.checkpoint").length === 3`, 30*time.Second)
	if page.Eval(`window.__sameDocument === true`) != true {
		t.Fatal("the page was reloaded: its panels must follow the run in place")
	}
	var agents []string
	page.EvalInto(`[...document.querySelectorAll("#panels .agents li .status")].map(s => s.textContent)`, &agents)
	if len(agents) != 3 || strings.Join(agents, " ") != "finished finished finished" {
		t.Errorf("the agents show %q, want three finished", agents)
	}
	assertPageInert(t, page)
	if os.Getenv("RALPH_SCREENSHOTS") == "1" {
		page.Screenshot(filepath.Join(moduleRoot, "docs", "images", "web-panels.png"))
	}
}
