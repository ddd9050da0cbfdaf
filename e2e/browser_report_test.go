package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/e2e/browser"
)

// The strings a hostile model writes into what ralph shows: a script
// element, an image whose error handler runs script, and a markdown link
// to a javascript: URL.
const (
	injectScript = `<script>alert(1)</script>`
	injectImg    = `<img src=x onerror=alert(2)>`
	injectLink   = `[x](javascript:alert(3))`
	// injectAnswer is markdown only an answer is rendered from: links
	// whose javascript: goldmark's own check missed (a character
	// reference, an entity, an autolink) and an image from another site.
	injectAnswer = `[y](&#106;avascript:alert(4)) [z](javascript&colon;alert(5)) <javascript:alert(6)> ![pixel](http://elsewhere.invalid/pixel.png)`
)

// TestBrowserReportRendersModelTextInert: a session whose task title,
// file name, command (and its failure), task summary and answer carry a
// <script>, an <img onerror> and a javascript: link is reported with
// --html and opened in real Chromium: no dialog fires, the page makes no
// request but for itself, nothing in the DOM can run script, and the
// strings show as text. With RALPH_SCREENSHOTS=1 the test writes
// docs/images/report.png.
func TestBrowserReportRendersModelTextInert(t *testing.T) {
	t.Parallel()
	needChromium(t)
	dir, env, all, fileName, command := injectedSession(t)
	h := ralph(t, dir, env, nil, "report", "--html")
	path := strings.TrimSpace(h.stdout)
	if h.code != 0 || !strings.HasSuffix(path, "report.html") {
		t.Fatalf("report --html: exit %d, %q\n%s", h.code, h.stdout, h.stderr)
	}

	pageURL := "file://" + path
	page := browser.Open(t, pageURL)
	page.WaitText("body", "fix "+injectScript, 10*time.Second)

	// Every string shows as the text the model wrote: the task's title
	// carries all three, the file name two, the failing command all three.
	text := page.Text("body")
	for _, want := range []string{"fix " + all, fileName, command} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q as text; it shows:\n%.3000s", want, text)
		}
	}
	// Nothing in the DOM can run: no element the strings could have
	// made, no handler attribute, no javascript: URL.
	if live := page.ScriptCapable(""); len(live) > 0 {
		t.Errorf("the report's DOM holds what could run script: %q", live)
	}
	// Clicking each link must not run anything either.
	page.Eval(`(() => { for (const a of document.querySelectorAll('a')) a.click(); return true; })()`)
	// A dialog or request the page made would have been recorded by the
	// time a round trip to it returns.
	page.Eval(`new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`)
	if d := page.Dialogs(); len(d) > 0 {
		t.Errorf("the report opened dialogs: %+v", d)
	}
	for _, r := range page.Requests() {
		if r != pageURL && !strings.HasPrefix(r, "data:") {
			t.Errorf("the report made a request: %s (it loads nothing but itself)", r)
		}
	}
	if out := page.RequestsOutside(); len(out) > 0 {
		t.Errorf("the report called out: %q", out)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if os.Getenv("RALPH_SCREENSHOTS") == "1" {
		page.Screenshot(filepath.Join(moduleRoot, "docs", "images", "report.png"))
	}
}

// injectedSession is a finished ralph run in a repository whose task
// title, file name, command (and its failure), task summary, answer and
// branch carry a <script>, an <img onerror> and a javascript: link: what
// a hostile model makes ralph show. It returns the project, its
// environment, the three strings together, the file name and the command.
func injectedSession(t *testing.T) (dir string, env []string, all, fileName, command string) {
	t.Helper()
	all = injectScript + " " + injectImg + " " + injectLink
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	// The file name cannot hold the script's closing "/", so it carries
	// the image and the link.
	fileName = injectImg + injectLink + ".txt"
	command = "ls '" + injectScript + "' '" + injectImg + "' '" + injectLink + "'"
	scenario := toolScenario(t, "inject", [][]toolCall{
		{{name: "write_file", args: args(map[string]string{"path": fileName, "content": all + "\n"})}},
		{{name: "run_command", args: args(map[string]string{"command": command})}},
		{{name: "complete_task", args: args(map[string]string{"id": "t1", "summary": "did " + all})}},
	}, "The answer: "+all+" "+injectAnswer)
	srv := inlineServer(t, scenario)
	// The project is a repository on a branch named with the script, so
	// the session's branch carries it too.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env = cleanEnv(t)
	writeTasks(t, dir, "fix "+all)
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm tasks && git checkout -qb '`+injectScript+`'`)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return dir, env, all, fileName, command
}
