package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// The web view speaks people's words, not the terminal's (issue 92, item
// 9): no status enum, no keys a page does not take, no "1 turns", and on
// a phone no page wider than its screen.

// terminalWords are what a page must never show: a status as
// session.json spells it, the terminal's keys and its pointer to "?",
// and a count whose noun did not go through text.Plural.
var terminalWords = []string{"waiting_for_input", "in_progress", "[y]es", "[n]o", "[a]lways", "? explains"}

// oneMany is a count of one with a plural noun: "1 turns", not "41 turns".
var oneMany = regexp.MustCompile(`(^|[^0-9,.])1 (turns|tokens|attempts|files|tasks)\b`)

// assertPeoplesWords fails when what the page shows (its text as a
// person reads it, hidden parts left out) holds a terminal word, and,
// on a phone, when the page is wider than its screen.
func assertPeoplesWords(t *testing.T, page *browser.Page, what string, size browser.Size) {
	t.Helper()
	text := page.Text("body")
	for _, bad := range terminalWords {
		if strings.Contains(text, bad) {
			t.Errorf("%s at %d×%d shows %q; it shows:\n%.3000s", what, size.Width, size.Height, bad, text)
		}
	}
	if m := oneMany.FindString(text); m != "" {
		t.Errorf("%s at %d×%d counts %q; it shows:\n%.3000s", what, size.Width, size.Height, m, text)
	}
	var w struct{ Scroll, Client int }
	page.EvalInto(`({Scroll: document.documentElement.scrollWidth, Client: document.documentElement.clientWidth})`, &w)
	if w.Scroll > w.Client {
		t.Errorf("%s at %d×%d is %d px wide on a screen of %d: it scrolls sideways", what, size.Width, size.Height, w.Scroll, w.Client)
	}
}

// TestBrowserServeSpeaksPeoplesWords: ralph chat --serve waits on its
// first approval; its page, at a laptop's size and a phone's, says the
// session waits for your answer, offers buttons named Allow once, Always
// allow, Deny (no [y]es / [n]o, no "? explains": the explanation is a
// details element of its own), counts one turn as "1 turn", and fits the
// phone's width; so does the index. Allow once, clicked, runs the
// command.
func TestBrowserServeSpeaksPeoplesWords(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "All done."))
	dir := t.TempDir()
	env := chatEnv(t)
	r := startPTY(t, dir, env, "chat", "--serve", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	printed := printedURL(t, func() string { return r.out.Since(0) })
	r.typeKeys("go\r")
	r.waitFor("allow? y/n/t/a/p", 20*time.Second)
	page := openLiveSession(t, printed)
	page.WaitJS(`!!document.querySelector(".waiting .question-text")`, 20*time.Second)
	// The page was served while the question waits: its facts say so.
	page.WaitText(".facts", "waiting for your answer", 5*time.Second)
	for _, size := range []browser.Size{browser.Desktop, browser.Phone} {
		page.Resize(size)
		assertPeoplesWords(t, page, "the session's page", size)
		var offered []string
		page.EvalInto(`[...document.querySelectorAll(".waiting button[name=answer]")].map(b => b.value + " " + b.innerText.trim())`, &offered)
		want := "y Allow once|n Deny|always Always allow|project Always allow in this project|t Deny and say why"
		if got := strings.Join(offered, "|"); got != want {
			t.Errorf("at %d×%d the page offers %q, want %q", size.Width, size.Height, got, want)
		}
		// What the terminal's "?" explains is on the page, in a details
		// element that names the buttons, not the keys.
		var explain string
		page.EvalInto(`(document.querySelector(".waiting details.explain") || {}).textContent || ""`, &explain)
		if !strings.Contains(explain, "“Always allow” remembers `echo`") {
			t.Errorf("at %d×%d the page does not explain what Always allow remembers: %q", size.Width, size.Height, explain)
		}
	}
	home := strings.SplitN(page.Eval(`location.href`).(string), "/s/", 2)[0] + "/"
	index := page.OpenTab(home)
	index.WaitJS(`!!document.querySelector('tr[data-key] [data-col="status"]')`, 20*time.Second)
	for _, size := range []browser.Size{browser.Desktop, browser.Phone} {
		index.Resize(size)
		assertPeoplesWords(t, index, "the index", size)
		if got := index.Text(`tr[data-key] [data-col="status"]`); got != "waiting for your answer" {
			t.Errorf("at %d×%d the index's status reads %q", size.Width, size.Height, got)
		}
	}

	page.Resize(browser.Desktop)
	page.Click(`.waiting button[value="y"]`)
	r.waitFor("answered in ralph serve's page: yes", 20*time.Second)
	r.waitFor("All done.", 20*time.Second)
	r.waitIdle(20*time.Second, nil)
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "ran.txt"))); got != "ran" {
		t.Fatalf("ran.txt holds %q: the command allowed in the page did not run", got)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	r.leave(0, 10*time.Second)

	// A one-shot of one turn: its row of ralph serve's index and its
	// page say "1 turn" (on a phone the card names each figure).
	hi := inlineServer(t, commandScenario(t, nil, "Hi."))
	if one := ralph(t, dir, env, nil, "--base-url", hi.URL, "say hi"); one.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", one.code, one.stderr)
	}
	index = browser.Open(t, serveURL(t, dir, env))
	row := `[...document.querySelectorAll("tr[data-key]")].find(tr => tr.querySelector('[data-col="first"]').textContent === "say hi")`
	index.WaitJS(`!!`+row, 20*time.Second)
	index.Resize(browser.Phone)
	assertPeoplesWords(t, index, "the index with the one-shot", browser.Phone)
	if got := index.Eval(row + `.querySelector('[data-col="turns"]').innerText`); got != "1 turn" {
		t.Errorf("on a phone the one-shot's turns read %q, want 1 turn", got)
	}
	oneShot := index.OpenTab(index.Eval(row + `.querySelector("a").href`).(string))
	oneShot.WaitJS(`!!document.querySelector(".facts")`, 20*time.Second)
	if got := oneShot.Text(".facts"); !strings.Contains(got, " · 1 turn · ") {
		t.Errorf("the one-shot's facts read %q, want 1 turn", got)
	}
	for _, size := range []browser.Size{browser.Desktop, browser.Phone} {
		oneShot.Resize(size)
		assertPeoplesWords(t, oneShot, "the one-shot's page", size)
	}
	if errs := oneShot.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserReportReadsOnAPhone: ralph report --html of a task loop of
// two tasks, opened at a laptop's size and a phone's, speaks people's
// words (a status and task states in words, counts through text.Plural),
// never scrolls sideways, and on the phone shows its timeline as text at
// least 11 px high, every task's title whole: the picture scaled to the
// phone's width drew its labels 4 px high.
func TestBrowserReportReadsOnAPhone(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	long := "write the release notes for every change since the last tag, grouped by package and linked to their issues"
	writeTasks(t, dir, "one", long)
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm tasks`)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	h := ralph(t, dir, env, nil, "report", "--html")
	path := strings.TrimSpace(h.stdout)
	if h.code != 0 || !strings.HasSuffix(path, "report.html") {
		t.Fatalf("report --html: exit %d, %q\n%s", h.code, h.stdout, h.stderr)
	}
	page := browser.Open(t, "file://"+path)
	page.WaitText("body", "Timeline", 10*time.Second)
	for _, size := range []browser.Size{browser.Desktop, browser.Phone} {
		page.Resize(size)
		assertPeoplesWords(t, page, "the report", size)
	}
	// The smallest text of the timeline as the phone draws it, and
	// whether every title shows whole there.
	var tl struct {
		Smallest float64
		Text     string
	}
	page.EvalInto(`(() => {
  const card = document.querySelector("h2 + .card");
  const walk = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
  let smallest = 1e9;
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.nodeValue.trim()) continue;
    const r = document.createRange();
    r.selectNodeContents(n);
    for (const box of r.getClientRects()) if (box.width > 0 && box.height > 0) smallest = Math.min(smallest, box.height);
  }
  return {Smallest: smallest, Text: card.innerText};
})()`, &tl)
	if tl.Smallest < 11 {
		t.Errorf("on a phone the timeline draws text %.1f px high: too small to read", tl.Smallest)
	}
	for _, want := range []string{"one", long} {
		if !strings.Contains(tl.Text, want) {
			t.Errorf("on a phone the timeline does not show %q whole; it shows:\n%s", want, tl.Text)
		}
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
