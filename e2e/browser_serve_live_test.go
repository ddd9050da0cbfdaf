package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// slowRunModel is taskChildModel taking delay before each answer and
// streaming it in small chunks, so a run of a few tasks emits its events
// over seconds: long enough for a page to follow it.
func slowRunModel(t *testing.T, delayMS int) *llmtest.Server {
	srv, release := gatedRunModel(t, delayMS)
	release()
	return srv
}

// gatedRunModel is slowRunModel holding every answer until release is
// called, so a test can have a page in place before the run works.
func gatedRunModel(t *testing.T, delayMS int) (srv *llmtest.Server, release func()) {
	gate := make(chan struct{})
	srv = llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		select {
		case <-gate:
		case <-time.After(2 * time.Minute):
		}
		resp := taskChildModel()(r)
		resp.DelayMS, resp.ChunkSize, resp.ChunkDelayMS = delayMS, 2, 5
		return resp
	})
	t.Cleanup(srv.Close)
	return srv, sync.OnceFunc(func() { close(gate) })
}

// openSessionPage opens the index at printed (ralph serve's URL, token
// included, or the same through a proxy) and then the page of session id
// in another tab of the same browser.
func openSessionPage(t *testing.T, printed, id string) (index, session *browser.Page) {
	t.Helper()
	index = browser.Open(t, printed)
	index.WaitText("body", id, 20*time.Second)
	session = index.OpenTab(index.Eval(`document.querySelector('a[href$="/` + id + `"]').href`).(string))
	session.WaitJS(`!!document.getElementById('events')`, 20*time.Second)
	return index, session
}

// eventTimes are a session's events (its events.jsonl) with their
// emission times, by event number: the SSE ids.
func eventTimes(t *testing.T, sessionPath string) map[int]event.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(sessionPath, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]event.Event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var ev event.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		n++
		out[n] = ev
	}
	return out
}

// TestBrowserServeEventsArriveWithin300ms: a ralph run is followed in
// Chromium on ralph serve's session page; a MutationObserver records when
// each line is added (Date.now(), the same clock ralph stamps its events
// with); every event emitted after the page's stream was following the
// run is in the page within 300 ms of its emission (its time in
// events.jsonl). On a machine loaded beyond its cores, the median is
// within 100 ms, 90 % of them within 300 ms, and all within 1 s.
func TestBrowserServeEventsArriveWithin300ms(t *testing.T) {
	needChromium(t)
	srv, release := gatedRunModel(t, 40)
	t.Cleanup(release)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six", "seven", "eight")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	printed := serveURL(t, dir, env)
	id := filepath.Base(sessionDir(t, dir))
	_, page := openSessionPage(t, printed, id)
	page.Eval(`(() => {
  window.__arrived = [];
  new MutationObserver(ms => {
    const now = Date.now();
    for (const m of ms) for (const n of m.addedNodes) if (n.dataset && n.dataset.id) window.__arrived.push([Number(n.dataset.id), now]);
  }).observe(document.getElementById('events'), {childList: true});
  return true;
})()`)
	// The run waits on the model until the page is in place.
	release()
	if code, _ := exitCode(t, run, 120*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	emitted := eventTimes(t, sessionDir(t, dir))
	// The last lines reach the page after the run has ended, before the
	// stream's end.
	page.WaitJS(`document.getElementById('events').dataset.ended === 'true'`, 30*time.Second)
	var arrived [][2]float64
	page.EvalInto(`window.__arrived`, &arrived)
	if len(arrived) == 0 {
		t.Fatal("no line arrived in the page while the run worked")
	}
	// The first line to arrive came through the stream, which had joined
	// the run's control socket by then: every event emitted after it is
	// one the page follows live (those before may be caught up from
	// events.jsonl, or have been in the page as it was served).
	since := arrived[0][1]
	var lat []time.Duration
	slow := map[time.Duration]string{}
	for _, a := range arrived {
		ev, ok := emitted[int(a[0])]
		if !ok {
			t.Fatalf("the page shows event %d, which events.jsonl does not hold", int(a[0]))
		}
		if float64(ev.Time.UnixMilli()) <= since {
			continue // emitted before the page watched
		}
		d := time.Duration(a[1]-float64(ev.Time.UnixMilli())) * time.Millisecond
		lat = append(lat, d)
		if d > 100*time.Millisecond {
			slow[d] = fmt.Sprintf("%d %s", int(a[0]), ev.Type)
		}
	}
	if len(lat) < 30 {
		t.Fatalf("only %d events arrived while the page watched (of %d in the session): too few to measure", len(lat), len(emitted))
	}
	slices.Sort(lat)
	med, p95, worst := lat[len(lat)/2], lat[len(lat)*95/100], lat[len(lat)-1]
	busy := overloaded()
	t.Logf("%d events: emission to the page's DOM, median %v, p90 %v, p95 %v, max %v (load average over the cores: %v)",
		len(lat), med, lat[len(lat)*9/10], p95, worst, busy)
	if len(slow) > 0 {
		t.Logf("the events slower than 100 ms: %v", slow)
	}
	// Every event is in the page within 300 ms. A machine running more
	// than its cores can hold lets the scheduler hold any process up for
	// longer than that now and then, so there the bounds are on the
	// distribution: a median within 100 ms, 90 % within 300 ms and none
	// beyond a second. A view that polled every 300 ms or more, or
	// buffered its stream, would miss them.
	p90 := lat[len(lat)*9/10]
	switch {
	case !busy && worst > 300*time.Millisecond:
		t.Fatalf("an event reached the page %v after it was emitted (median %v); the bound is 300 ms: %v", worst, med, lat)
	case med > 100*time.Millisecond || p90 > 300*time.Millisecond || worst > time.Second:
		t.Fatalf("on a busy machine, the events reached the page in a median %v, 90 %% within %v, the slowest in %v; the bounds are 100 ms, 300 ms and 1 s: %v",
			med, p90, worst, lat)
	}
}

// overloaded reports whether the machine's load average over the last
// minute is above its number of cores (Linux; false elsewhere).
func overloaded() bool {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	load, err := strconv.ParseFloat(f[0], 64)
	return err == nil && load > float64(runtime.NumCPU())
}

// pageRows are the lines a session page shows, each as its class and
// text.
func pageRows(t *testing.T, p *browser.Page) []string {
	t.Helper()
	var rows []string
	p.EvalInto(`[...document.querySelectorAll('#events li')].map(li => li.className + ' ' + li.innerText)`, &rows)
	return rows
}

// TestBrowserServeSSEResumesAfterDrop: a ralph run's page, opened in
// Chromium through a proxy in front of ralph serve (so its Host check
// stands), loses its connections three times while the run works; each
// time the page's EventSource comes back asking from the last id it had.
// When the run is over the page shows the same lines as a fresh page of
// the finished session, and the ids of the lines that came live are
// those of the finished session's stream after the page was rendered: no
// event lost, none doubled.
func TestBrowserServeSSEResumesAfterDrop(t *testing.T) {
	t.Parallel()
	needChromium(t)
	// The model answers once the page is in place: on a busy machine
	// Chromium has taken longer to open it than the run took to finish,
	// and then no line came live at all.
	srv, release := gatedRunModel(t, 80)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six", "seven", "eight")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	printed, err := url.Parse(serveURL(t, dir, env))
	if err != nil {
		t.Fatal(err)
	}
	proxy := browser.NewProxy(t, "http://"+printed.Host)
	id := filepath.Base(sessionDir(t, dir))
	_, page := openSessionPage(t, proxy.URL+"/?"+printed.RawQuery, id)
	var rendered int
	page.EvalInto(`Number(document.getElementById('events').dataset.last)`, &rendered)
	release()
	seen := 0
	for i := range 3 {
		page.WaitJS(fmt.Sprintf(`document.querySelectorAll('#events li[data-id]').length > %d`, seen), 60*time.Second)
		page.DropConnections(proxy, func() { time.Sleep(400 * time.Millisecond) })
		page.EvalInto(`document.querySelectorAll('#events li[data-id]').length`, &seen)
		t.Logf("drop %d after %d live lines", i+1, seen)
	}
	if code, _ := exitCode(t, run, 120*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	// The finished session's stream, read from its records, from the
	// number the followed page was rendered up to.
	fresh := page.OpenTab(proxy.URL + "/s/" + strings.TrimPrefix(page.Eval(`location.pathname`).(string), "/s/"))
	fresh.WaitJS(`document.querySelectorAll('#events li').length > 0`, 20*time.Second)
	want := pageRows(t, fresh)
	watch := browser.WatchSSE(fresh, page.Eval(`location.pathname`).(string)+"/events?last="+strconv.Itoa(rendered), "line", "end")
	fresh.WaitJS(`window.__ralphSSE && Object.values(window.__ralphSSE)[0].events.some(e => e.type === 'end')`, 20*time.Second)
	var wantIDs []string
	for _, e := range watch.Events() {
		if e.Type == "line" {
			wantIDs = append(wantIDs, e.ID)
		}
	}
	// The followed page has its stream's end too: the last lines are in.
	page.WaitJS(fmt.Sprintf(`document.querySelectorAll('#events li').length >= %d`, len(want)), 30*time.Second)
	got := pageRows(t, page)
	var gotIDs []string
	page.EvalInto(`[...document.querySelectorAll('#events li[data-id]')].map(li => li.dataset.id)`, &gotIDs)
	if strings.Join(gotIDs, ",") != strings.Join(wantIDs, ",") {
		t.Errorf("the ids of the lines that came live, across 3 drops:\n%v\nthe finished session's stream after %d:\n%v", gotIDs, rendered, wantIDs)
	}
	if len(got) != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the followed page (%d lines) differs from a fresh page of the finished session (%d lines):\n%s\n---\n%s",
			len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(gotIDs) < 20 {
		t.Fatalf("only %d lines came live: the drops tested little", len(gotIDs))
	}
}

// TestBrowserServeIndexUpdatesLive: the index, open in Chromium before a
// ralph run starts, shows the run's session when it starts (no reload),
// live, then its turns and tokens growing in the same row, and, when the
// run has ended, its status completed and the live flag gone.
func TestBrowserServeIndexUpdatesLive(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := slowRunModel(t, 60)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six")
	env := cleanEnv(t)
	printed := serveURL(t, dir, env)
	index := browser.Open(t, printed)
	index.WaitText("body", "no sessions yet", 20*time.Second)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	id := filepath.Base(sessionDir(t, dir))
	row := `document.querySelector('tr[data-key$="/` + id + `"]')`
	index.WaitJS(row+` !== null && `+row+`.querySelector('.live') !== null`, 20*time.Second)
	index.Eval(`(window.__row = ` + row + `), true`)
	cell := func(c string) string {
		return index.Eval(row + `.querySelector('[data-col="` + c + `"]').innerText`).(string)
	}
	t.Logf("the new row: status %q, turns %q, tokens %q", cell("status"), cell("turns"), cell("tokens"))
	index.WaitJS(row+`.querySelector('[data-col="turns"]').innerText !== '0' && `+row+`.querySelector('[data-col="tokens"]').innerText !== '0'`, 60*time.Second)
	if code, _ := exitCode(t, run, 120*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	index.WaitJS(row+`.querySelector('.live') === null && `+row+`.querySelector('[data-col="status"]').innerText === 'completed'`, 20*time.Second)
	if same := index.Eval(`window.__row === ` + row).(bool); !same {
		t.Errorf("the row was replaced rather than updated in place")
	}
	if n := index.Eval(`document.querySelectorAll('tr[data-key]').length`).(float64); n != 1 {
		t.Errorf("the index shows %v sessions, want 1", n)
	}
	t.Logf("the ended row: status %q, turns %q, tokens %q, cost %q, age %q", cell("status"), cell("turns"), cell("tokens"), cell("cost"), cell("age"))
	if errs := pageErrors(index); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// pageErrors are a page's console errors but the browser's own 404 for
// /favicon.ico, which a first tab asks for and ralph serve does not have.
func pageErrors(p *browser.Page) []string {
	favicon := slices.ContainsFunc(p.Requests(), func(u string) bool { return strings.HasSuffix(u, "/favicon.ico") })
	var out []string
	for _, e := range p.ConsoleErrors() {
		if favicon && strings.Contains(e, "Failed to load resource") && strings.Contains(e, "404") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// TestWebScreenshots: ralph serve's index and a live run's page in
// Chromium in the light and dark schemes the browser prefers and at a
// phone's width: the dark scheme is dark (and the light one light), and
// at 390 px no page is wider than the screen. With RALPH_SCREENSHOTS=1 it
// writes docs/images/web-{index,live}{,-dark,-phone}.png, the pictures of
// docs/web.md.
func TestWebScreenshots(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := slowRunModel(t, 400)
	dir := t.TempDir()
	writeTasks(t, dir, "add the login form", "validate the e-mail field", "show errors inline", "write the tests", "update the changelog",
		"tidy the styles", "check the phone layout", "release notes")
	env := cleanEnv(t)
	startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	printed := serveURL(t, dir, env)
	id := filepath.Base(sessionDir(t, dir))
	index, live := openSessionPage(t, printed, id)
	live.WaitJS(`document.querySelectorAll('#events li').length >= 12 && !!document.querySelector('.steer')`, 60*time.Second)
	index.WaitJS(`!!document.querySelector('tr[data-key] .live') && document.querySelector('[data-col="turns"]').innerText !== '0'`, 30*time.Second)
	shots := os.Getenv("RALPH_SCREENSHOTS") == "1"
	for _, m := range []struct {
		suffix        string
		width, height int
		mobile        bool
		scheme        string
	}{
		{"", 1200, 800, false, "light"},
		{"-dark", 1200, 800, false, "dark"},
		{"-phone", 390, 844, true, "light"},
	} {
		for name, p := range map[string]*browser.Page{"index": index, "live": live} {
			p.Emulate(m.width, m.height, m.mobile, m.scheme)
			var bg []float64
			p.EvalInto(`getComputedStyle(document.body).backgroundColor.match(/\d+/g).slice(0, 3).map(Number)`, &bg)
			light := (bg[0] + bg[1] + bg[2]) / 3
			if m.scheme == "dark" && light > 60 || m.scheme == "light" && light < 200 {
				t.Errorf("%s in the %s scheme has the background %v", name, m.scheme, bg)
			}
			var wide []float64
			p.EvalInto(`[document.documentElement.scrollWidth, window.innerWidth]`, &wide)
			if wide[0] > wide[1] {
				t.Errorf("%s at %d px wide is %v px wide: the page scrolls sideways", name, m.width, wide[0])
			}
			if shots {
				p.Screenshot(filepath.Join(moduleRoot, "docs", "images", "web-"+name+m.suffix+".png"))
			}
		}
	}
	if m := live.Eval(`(() => { const b = document.querySelector('.steer button'); const r = b.getBoundingClientRect(); return r.width >= 40 && r.height >= 36; })()`).(bool); !m {
		t.Errorf("at a phone's width the steering buttons are smaller than a fingertip")
	}
	for _, p := range []*browser.Page{index, live} {
		if errs := pageErrors(p); len(errs) > 0 {
			t.Errorf("console errors: %q", errs)
		}
	}
}
