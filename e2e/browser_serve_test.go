package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// TestBrowserServeRendersModelTextInert: the session a hostile model
// wrote (injectedSession: a <script>, an <img onerror> and a javascript:
// link in the task, a file name, a command, the answer and the branch)
// is opened in real Chromium through ralph serve's printed URL: the token
// becomes a cookie and leaves the address bar, the session's page shows
// the strings as text, nothing in the DOM but ralph's own script can run,
// no dialog fires and no request leaves the server. With
// RALPH_SCREENSHOTS=1 it writes docs/images/web-session.png.
func TestBrowserServeRendersModelTextInert(t *testing.T) {
	t.Parallel()
	needChromium(t)
	dir, env, _, fileName, command := injectedSession(t)
	printed := serveURL(t, dir, env)
	page := browser.Open(t, printed)
	id := filepath.Base(sessionDir(t, dir))
	page.WaitText("body", id, 20*time.Second)
	if u := page.Eval(`location.href`).(string); strings.Contains(u, "token=") {
		t.Fatalf("the token stayed in the address bar: %s", u)
	}
	page = page.OpenTab(page.Eval(`document.querySelector('a[href$="/` + id + `"]').href`).(string))
	page.WaitText("body", fileName, 20*time.Second)
	text := page.Text("body")
	// The command's line is cut to the view's width, as ralph watch cuts
	// it; its start holds the script and the image.
	for _, want := range []string{fileName, command[:strings.Index(command, "[x]")]} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q as text; it shows:\n%.3000s", want, text)
		}
	}
	// ralph's own script is the one element that may run.
	if live := page.ScriptCapable(`script[src^="/assets/"]`); len(live) > 0 {
		t.Errorf("the session page's DOM holds what could run script: %q", live)
	}
	page.Eval(`new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`)
	if d := page.Dialogs(); len(d) > 0 {
		t.Errorf("the page opened dialogs: %+v", d)
	}
	if out := page.RequestsOutside("127.0.0.1"); len(out) > 0 {
		t.Errorf("the page called out: %q", out)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if os.Getenv("RALPH_SCREENSHOTS") == "1" {
		page.Screenshot(filepath.Join(moduleRoot, "docs", "images", "web-session.png"))
	}
}

// TestBrowserServeFollowsALiveRun: a ralph run's page, open in Chromium
// while the run works, grows by the events the run emits (live.js over
// server-sent events) without a reload, and ends showing as many lines as
// the finished session's page.
func TestBrowserServeFollowsALiveRun(t *testing.T) {
	t.Parallel()
	needChromium(t)
	// The model answers nothing until the page is open: on an idle
	// machine the six tasks are done before a browser starts, and the
	// page would have nothing left to follow.
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		<-release
		resp := taskChildModel()(r)
		resp.ChunkSize, resp.ChunkDelayMS = 2, 5
		return resp
	})
	t.Cleanup(srv.Close)
	t.Cleanup(open)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	printed := serveURL(t, dir, env)
	page := browser.Open(t, printed)
	id := filepath.Base(sessionDir(t, dir))
	page.WaitText("body", id, 20*time.Second)
	page = page.OpenTab(page.Eval(`document.querySelector('a[href$="/` + id + `"]').href`).(string))
	page.WaitJS(`document.querySelector('#events') !== null`, 20*time.Second)
	var first int
	page.EvalInto(`document.querySelectorAll('#events li').length`, &first)
	open()
	// Lines arrive while the run works: more than the page was served with.
	page.WaitJS(`document.querySelectorAll('#events li').length > `+strconv.Itoa(first), 60*time.Second)
	if code, _ := exitCode(t, run, 90*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	// The followed page ends with what a fresh page of the finished
	// session shows.
	fresh := page.OpenTab(page.Eval(`location.href`).(string))
	fresh.WaitJS(`document.querySelectorAll('#events li').length > 0`, 20*time.Second)
	var want int
	fresh.EvalInto(`document.querySelectorAll('#events li').length`, &want)
	page.WaitJS(`document.querySelectorAll('#events li').length >= `+strconv.Itoa(want), 20*time.Second)
	var got int
	page.EvalInto(`document.querySelectorAll('#events li').length`, &got)
	if got != want {
		t.Fatalf("the followed page shows %d lines, a fresh page of the finished session %d", got, want)
	}
	if d := page.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs: %+v", d)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
