package web

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/tools"
)

const (
	testRoot    = "/p"
	testSession = "s1"
	testToken   = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// hostile is what a model might write to make a page run its code.
const hostile = `<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3))`

// fixture is a server over one finished session whose events hold the
// hostile strings in an answer, a command and a file name.
type fixture struct {
	ts  *httptest.Server
	url string // the server's address, http://host:port
}

func newFixture(t *testing.T, readOnly bool) fixture {
	t.Helper()
	fs := afero.NewMemMapFs()
	args, _ := json.Marshal(map[string]string{"command": "echo " + hostile})
	evs := []event.Event{
		{Type: event.SessionStarted, Model: "m<script>x</script>"},
		{Type: event.TurnStarted, Turn: 1},
		{Type: event.ToolCall, ToolName: tools.ToolRunCommand, ToolArgs: args, ToolID: "c1"},
		{Type: event.FilesChanged, Text: "changed <script>alert(4)</script>.go", Files: []git.FileChange{{Path: "<script>alert(4)</script>.go"}}},
		{Type: event.Assistant, Text: "# done\n\nsee [click](javascript:alert(3)) and x <img src=x onerror=alert(5)> y\n\n" + hostile},
	}
	var b strings.Builder
	for _, ev := range evs {
		line, _ := json.Marshal(ev)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := afero.WriteFile(fs, memory.LogPath(testRoot, testSession, memory.EventsLog), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Options{Addr: ts.Listener.Addr().String(), ReadOnly: readOnly, Fs: fs, Token: testToken,
		Sessions: func() []memory.RegistryEntry {
			return []memory.RegistryEntry{{Root: testRoot, SessionID: testSession, Status: "done", UpdatedAt: time.Now()}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return fixture{ts: ts, url: ts.URL}
}

// do sends a request with the token's cookie when withCookie.
func (f fixture) do(t *testing.T, req *http.Request, withCookie bool) *http.Response {
	t.Helper()
	if withCookie {
		req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (f fixture) get(t *testing.T, path string, withCookie bool) *http.Response {
	req, _ := http.NewRequest(http.MethodGet, f.url+path, nil)
	return f.do(t, req, withCookie)
}

func (f fixture) sessionPath() string { return "/s/" + projectKey(testRoot) + "/" + testSession }

func (f fixture) post(t *testing.T, path string, form url.Values, origin string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, f.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return f.do(t, req, true)
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNoTokenIs401(t *testing.T) {
	f := newFixture(t, false)
	for _, p := range []string{"/", f.sessionPath(), f.sessionPath() + "/events", "/assets/live.js", "/?token=wrong"} {
		if r := f.get(t, p, false); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", p, r.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.url+"/", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: strings.Repeat("0", 64)})
	if r := f.do(t, req, false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong cookie: %d, want 401", r.StatusCode)
	}
}

func TestTokenBecomesAStrictHttpOnlyCookie(t *testing.T) {
	f := newFixture(t, false)
	r := f.get(t, "/?token="+testToken, false)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("the URL with the token: %d to %q, want 303 to /", r.StatusCode, r.Header.Get("Location"))
	}
	c := r.Cookies()
	if len(c) != 1 || c[0].Value != testToken || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v, want the token, HttpOnly, SameSite=Strict", c)
	}
	if r := f.get(t, "//evil.example/x?token="+testToken, false); r.Header.Get("Location") != "/evil.example/x" {
		t.Fatalf("a path of two slashes redirected to %q, another server", r.Header.Get("Location"))
	}
	if r := f.get(t, "/", true); r.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %d", r.StatusCode)
	}
	if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("a CORS header was set: %q", h)
	}
}

func TestWrongHostIs403(t *testing.T) {
	f := newFixture(t, false)
	req, _ := http.NewRequest(http.MethodGet, f.url+"/", nil)
	req.Host = "attacker.example:" + f.ts.URL[strings.LastIndex(f.ts.URL, ":")+1:]
	if r := f.do(t, req, true); r.StatusCode != http.StatusForbidden {
		t.Fatalf("Host %s (DNS rebinding): %d, want 403", req.Host, r.StatusCode)
	}
}

func TestNonLoopbackNeedsRemote(t *testing.T) {
	if _, err := New(Options{Addr: "0.0.0.0:7777", Sessions: func() []memory.RegistryEntry { return nil }}); err == nil {
		t.Fatal("a non-loopback address was served without Remote")
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, "10.0.0.1:1": false, ":7777": false} {
		if IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%q) = %v", addr, !want)
		}
	}
}

func TestStateChangesNeedSameOriginAndCSRF(t *testing.T) {
	f := newFixture(t, false)
	p := f.sessionPath() + "/pause"
	good := url.Values{csrfField: {csrfFor(testToken)}}
	if r := f.post(t, p, good, "http://evil.example"); r.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d, want 403", r.StatusCode)
	}
	if r := f.post(t, p, url.Values{}, f.url); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST without a CSRF token: %d, want 403", r.StatusCode)
	}
	if r := f.post(t, p, url.Values{csrfField: {csrfFor("another token")}}, f.url); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST with another session's CSRF token: %d, want 403", r.StatusCode)
	}
	// Same origin and the right token pass to the handler, which finds
	// no ralph running and says so on the page.
	r := f.post(t, p, good, f.url)
	if r.StatusCode != http.StatusSeeOther {
		t.Errorf("a good POST: %d, want 303", r.StatusCode)
	}
	if loc, _ := url.Parse(r.Header.Get("Location")); !strings.Contains(loc.Query().Get("reply"), "is not running; nothing was sent") {
		t.Errorf("a finished session was steered: %q", r.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodDelete, f.url+p, nil)
	if r := f.do(t, req, true); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", r.StatusCode)
	}
}

func TestReadOnlyRefusesSteering(t *testing.T) {
	f := newFixture(t, true)
	for _, op := range []string{"stop", "pause", "continue", "say", "answer"} {
		r := f.post(t, f.sessionPath()+"/"+op, url.Values{csrfField: {csrfFor(testToken)}, "text": {"hi"}}, f.url)
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("read-only %s: %d, want 403", op, r.StatusCode)
		}
	}
}

// inert checks that nothing of the hostile strings is markup in page.
func inert(t *testing.T, what, page string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img", "onerror=alert(2)>", `href="javascript:`} {
		if strings.Contains(page, bad) {
			t.Errorf("%s holds %q as markup:\n%s", what, bad, page)
		}
	}
}

func TestModelStringsAreInert(t *testing.T) {
	f := newFixture(t, false)
	page := body(t, f.get(t, f.sessionPath(), true))
	inert(t, "the session page", page)
	for _, want := range []string{"&lt;script&gt;alert(4)&lt;/script&gt;.go", "running `echo &lt;script&gt;", "<h1>done</h1>", "click"} {
		if !strings.Contains(page, want) {
			t.Errorf("the session page lacks %q:\n%s", want, page)
		}
	}
	inert(t, "the index", body(t, f.get(t, "/", true)))
	// The stream carries JSON whose html the script sets: the same
	// rendering, checked once decoded.
	stream := body(t, f.get(t, f.sessionPath()+"/events", true))
	for _, line := range strings.Split(stream, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var x row
			_ = json.Unmarshal([]byte(data), &x)
			inert(t, "a streamed answer", string(x.HTML))
		}
	}
}

// sseIDs reads the ids of a stream's line events up to its end.
func sseIDs(t *testing.T, r *http.Response) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
		if sc.Text() == "event: end" {
			break
		}
	}
	return ids
}

func TestEventStreamResumesAfterLastEventID(t *testing.T) {
	f := newFixture(t, false)
	r := f.get(t, f.sessionPath()+"/events", true)
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	all := sseIDs(t, r)
	if strings.Join(all, ",") != "1,2,3,4,5" {
		t.Fatalf("ids %v, want 1..5", all)
	}
	req, _ := http.NewRequest(http.MethodGet, f.url+f.sessionPath()+"/events", nil)
	req.Header.Set("Last-Event-ID", "3")
	if got := sseIDs(t, f.do(t, req, true)); strings.Join(got, ",") != "4,5" {
		t.Fatalf("after Last-Event-ID 3: %v, want 4,5", got)
	}
	// The page says how far it was rendered, and its script opens the
	// stream from there.
	if page := body(t, f.get(t, f.sessionPath(), true)); !strings.Contains(page, `data-last="5"`) {
		t.Fatalf("the page does not say it holds events up to 5:\n%s", page)
	}
}
