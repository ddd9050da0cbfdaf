package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/e2e/browser"
)

// Issue 57, items 2 and 10, in Chromium: ralph serve shows the person's
// prompts in the session page and the index, the index fits a laptop and
// a phone with the first words kept (cut), and a live page keeps its
// newest events on screen beside the diffs. (A stop from the page saying
// so is in TestBrowserServeStopInPage.)

// TestBrowserSessionPageShowsBothSides: a one-shot continued with -c, in
// ralph serve: the session's page shows both prompts, each once, before
// their answers, and the index shows the first one as the session's first
// words.
func TestBrowserSessionPageShowsBothSides(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"the answer is **four**"}]}`)
	dir, env := t.TempDir(), cleanEnv(t)
	first, second := "what is two plus two, PERSON-ONE", "and three plus three, PERSON-TWO"
	for _, args := range [][]string{{first}, {"-c", second}} {
		if r := ralph(t, dir, env, nil, append([]string{"--base-url", srv.URL}, args...)...); r.code != 0 {
			t.Fatalf("ralph %q: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	id := filepath.Base(sessionDir(t, dir))
	index, page := openSessionPage(t, serveURL(t, dir, env), id)
	if got := index.Eval(`document.querySelector('tr[data-key$="/` + id + `"] [data-col="first"]').textContent`).(string); got != first {
		t.Errorf("the index's first words: %q, want the person's %q", got, first)
	}
	page.WaitJS(`document.querySelectorAll('#events li.prompt').length >= 2`, 20*time.Second)
	var rows []string
	page.EvalInto(`[...document.querySelectorAll('#events li')].map(li => li.className + ' ' + li.innerText)`, &rows)
	var prompts, answers []int
	for i, r := range rows {
		if strings.HasPrefix(r, "prompt ") {
			prompts = append(prompts, i)
		}
		if strings.HasPrefix(r, "answer ") {
			answers = append(answers, i)
		}
	}
	all := strings.Join(rows, "\n")
	if len(prompts) != 2 || len(answers) != 2 || !strings.Contains(rows[prompts[0]], first) || !strings.Contains(rows[prompts[1]], second) ||
		prompts[0] > answers[0] || answers[0] > prompts[1] || prompts[1] > answers[1] {
		t.Fatalf("the page's lines, want each prompt once before its answer:\n%s", all)
	}
	if strings.Contains(all, "session started") {
		t.Errorf("the page shows a run's start as a new session:\n%s", all)
	}
}

// TestBrowserIndexFitsLaptopAndPhone: an index of sessions with long
// first words, at 1280 px and at a phone's 390 px: the page is no wider
// than the screen, and every session's first words are shown, on one
// line, cut to the screen (the whole words in the cell's title).
func TestBrowserIndexFitsLaptopAndPhone(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	env := cleanEnv(t)
	long := strings.Repeat("please refactor the payment module so that every provider goes through one interface ", 4)
	var ids []string
	for i := range 3 {
		dir := t.TempDir()
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, fmt.Sprintf("SESSION-%d %s", i, long)); r.code != 0 {
			t.Fatalf("ralph: exit %d\n%s", r.code, r.stderr)
		}
		ids = append(ids, filepath.Base(sessionDir(t, dir)))
	}
	page := browser.Open(t, serveURL(t, t.TempDir(), env))
	page.WaitText("body", ids[2], 20*time.Second)
	for _, m := range []struct {
		width, height int
		mobile        bool
	}{{1280, 800, false}, {390, 844, true}} {
		page.Emulate(m.width, m.height, m.mobile, "light")
		var got struct {
			ScrollWidth, Width float64
			Cells              []struct {
				Display, Text, Title       string
				Left, Right, Width, Height float64
				ScrollWidth, ClientWidth   float64
				LineHeight, FontSize       float64
			}
		}
		page.EvalInto(`(() => ({
			ScrollWidth: document.documentElement.scrollWidth, Width: window.innerWidth,
			Cells: [...document.querySelectorAll('tr[data-key] td[data-col="first"]')].map(td => {
				const r = td.getBoundingClientRect(), cs = getComputedStyle(td);
				return {Display: cs.display, Text: td.textContent, Title: td.title, Left: r.left, Right: r.right, Width: r.width, Height: r.height,
					ScrollWidth: td.scrollWidth, ClientWidth: td.clientWidth, LineHeight: parseFloat(cs.lineHeight) || 0, FontSize: parseFloat(cs.fontSize)};
			})}))()`, &got)
		if got.ScrollWidth > got.Width {
			t.Errorf("at %d px the index is %v px wide: it scrolls sideways", m.width, got.ScrollWidth)
		}
		if len(got.Cells) != 3 {
			t.Fatalf("at %d px: %d first-words cells, want 3", m.width, len(got.Cells))
		}
		for _, c := range got.Cells {
			line := max(c.LineHeight, 1.6*c.FontSize)
			switch {
			case c.Display == "none" || c.Width < 150:
				t.Errorf("at %d px the first words %.20q… are hidden or squeezed (%s, %v px wide)", m.width, c.Text, c.Display, c.Width)
			case c.Left < 0 || c.Right > got.Width+0.5:
				t.Errorf("at %d px the first words run off the screen: from %v to %v of %v px", m.width, c.Left, c.Right, got.Width)
			case c.Height > line+8:
				t.Errorf("at %d px the first words take %v px of height, more than a line (%v px)", m.width, c.Height, line)
			case c.ScrollWidth <= c.ClientWidth:
				t.Errorf("at %d px the long first words are not cut (%v of %v px)", m.width, c.ClientWidth, c.ScrollWidth)
			case !strings.HasPrefix(c.Text, "SESSION-") || c.Title != c.Text:
				t.Errorf("at %d px the cell holds %.30q with the title %.30q, want the whole first words in both", m.width, c.Text, c.Title)
			}
		}
	}
	if errs := pageErrors(page); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserLivePageKeepsNewestEventsInView: a ralph run of six tasks,
// each changing a file, followed in its page at 1280×800: while it works
// and when it has ended, the newest event line is on the screen without
// scrolling the page, beside the panels and their diffs rather than below
// them.
func TestBrowserLivePageKeepsNewestEventsInView(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv, release := gatedRunModel(t, 150)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTasks(t, dir, "add the login form", "validate the e-mail field", "show errors inline", "write the tests",
		"update the changelog", "tidy the styles")
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm tasks`)
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	id := filepath.Base(sessionDir(t, dir))
	_, page := openSessionPage(t, serveURL(t, dir, env), id)
	page.Emulate(1280, 800, false, "light")
	release()
	newestInView := func(when string) {
		t.Helper()
		var got struct {
			Top, Bottom, Height, ScrollY, Lines float64
			Text                                string
		}
		// The page lays itself out again after a new screen size or a
		// new line; it has a moment to.
		inView := `(() => { const li = [...document.querySelectorAll('#events li')].pop(), r = li.getBoundingClientRect();
			return window.scrollY === 0 && r.top >= 0 && r.bottom <= window.innerHeight + 1; })()`
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && page.Eval(inView) != true; {
			time.Sleep(100 * time.Millisecond)
		}
		page.EvalInto(`(() => { const li = [...document.querySelectorAll('#events li')].pop(); const r = li.getBoundingClientRect();
			return {Top: r.top, Bottom: r.bottom, Height: window.innerHeight, ScrollY: window.scrollY,
				Lines: document.querySelectorAll('#events li').length, Text: li.innerText}; })()`, &got)
		if got.ScrollY != 0 || got.Top < 0 || got.Bottom > got.Height+1 {
			var box string
			page.EvalInto(`(() => { const l = document.getElementById('events'), r = l.getBoundingClientRect(), b = document.querySelector('.session-body');
				return JSON.stringify({top: r.top, bottom: r.bottom, left: r.left, width: r.width, scrollTop: l.scrollTop, scrollHeight: l.scrollHeight,
					clientHeight: l.clientHeight, cols: b && getComputedStyle(b).gridTemplateColumns, maxHeight: getComputedStyle(l).maxHeight}); })()`, &box)
			t.Errorf("%s: the newest of %v lines (%.60q) is at %v–%v px of an %v px screen scrolled by %v: not in view (the log's box: %s)",
				when, got.Lines, got.Text, got.Top, got.Bottom, got.Height, got.ScrollY, box)
		}
	}
	page.WaitJS(`document.querySelectorAll('#panels details.checkpoint').length >= 2 && document.querySelectorAll('#events li').length >= 20`, 90*time.Second)
	newestInView("while the run works")
	if code, _ := exitCode(t, run, 120*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	page.WaitJS(`[...document.querySelectorAll('#events li')].pop().innerText.includes('success')`, 30*time.Second)
	newestInView("when the run has ended")
	fresh := page.OpenTab(page.Eval(`location.href`).(string))
	fresh.Emulate(1280, 800, false, "light")
	fresh.WaitJS(`document.querySelectorAll('#panels details.checkpoint').length >= 6`, 20*time.Second)
	page = fresh
	newestInView("a fresh page of the finished run")
	if errs := pageErrors(page); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
