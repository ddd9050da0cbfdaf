package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// TestPostWithoutOriginIs403: a POST with the cookie and the right CSRF
// token but no Origin header (what a page of this server never sends) is
// refused, as is one from another port of the same host or "null".
func TestPostWithoutOriginIs403(t *testing.T) {
	f := newFixture(t, false)
	p := f.sessionPath() + "/stop"
	good := url.Values{csrfField: {csrfFor(testToken)}}
	if r := f.post(t, p, good, ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST without an Origin: %d, want 403", r.StatusCode)
	}
	u, _ := url.Parse(f.url)
	for _, o := range []string{"null", "http://" + u.Hostname() + ":1", "file://"} {
		if r := f.post(t, p, good, o); r.StatusCode != http.StatusForbidden {
			t.Errorf("POST from Origin %q: %d, want 403", o, r.StatusCode)
		}
	}
	if r := f.post(t, p, good, f.url); r.StatusCode != http.StatusSeeOther {
		t.Errorf("a same-origin POST with the CSRF token: %d, want 303", r.StatusCode)
	}
}

// liveFixture is a server over one session, shown as running and
// waiting on q.
func liveFixture(t *testing.T, q *memory.Question) fixture {
	t.Helper()
	was := running
	running = func(afero.Fs, string, string) bool { return true }
	t.Cleanup(func() { running = was })
	fs := afero.NewMemMapFs()
	st, _ := json.Marshal(memory.State{SessionID: testSession, Status: memory.StatusWaitingForInput, Question: q})
	if err := afero.WriteFile(fs, filepath.Join(memory.SessionDir(testRoot, testSession), "session.json"), st, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Options{Addr: ts.Listener.Addr().String(), Fs: fs, Token: testToken,
		Sessions: func() []memory.RegistryEntry {
			return []memory.RegistryEntry{{Root: testRoot, SessionID: testSession, Status: "running", UpdatedAt: time.Now()}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return fixture{ts: ts, url: ts.URL}
}

// TestSteerPartOffersTheAskersChoices: the steering part of a session
// waiting on an approval shows the whole command, as text, and one
// button for each answer the policy offers, labelled with words, not the
// terminal's keys; t has a field for the words; the question's plain text
// and its explanation are shown where the asker wrote them; a plan's
// question offers a, r (with words) and d; the model's question a field.
func TestSteerPartOffersTheAskersChoices(t *testing.T) {
	cmd := "run `make <script>alert(1)</script> && \\\n  echo a very long command line that the terminal would not cut either`?"
	f := liveFixture(t, &memory.Question{ID: 3, Kind: "approval", Text: cmd + " [y]es / [n]o (? explains)", Plain: cmd,
		Details: "“Always allow” remembers <b>make</b>", Answers: []string{"y", "n", "t", "always", "project"}})
	page := body(t, f.get(t, f.sessionPath()+"/steer", true))
	for _, want := range []string{"make &lt;script&gt;alert(1)&lt;/script&gt; &amp;&amp; \\\n  echo a very long command line that the terminal would not cut either",
		`<pre class="question-text">`, `value="y">Allow once`, `value="n">Deny`, `value="always">Always allow`,
		`value="project">Always allow in this project`, `name="takes_words" value="t"`, `value="t">Deny and say why`,
		`<details class="explain"><summary>what these answers do</summary><p>“Always allow” remembers &lt;b&gt;make&lt;/b&gt;</p></details>`,
		`name="id" value="3"`, `action="/s/` + projectKey(testRoot) + `/s1/stop"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the steering part lacks %q:\n%s", want, page)
		}
	}
	for _, bad := range []string{"[y]es", "? explains", "<kbd>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the steering part shows the terminal's %q:\n%s", bad, page)
		}
	}
	inert(t, "the steering part", page)

	f = liveFixture(t, &memory.Question{ID: 4, Kind: "plan", Text: "# the plan", Answers: []string{"a", "r", "d"}})
	page = body(t, f.get(t, f.sessionPath()+"/steer", true))
	for _, want := range []string{`value="a">Accept`, `name="takes_words" value="r"`, `value="d">Drop`} {
		if !strings.Contains(page, want) {
			t.Errorf("the plan's question lacks %q:\n%s", want, page)
		}
	}
	f = liveFixture(t, &memory.Question{ID: 5, Kind: "ask_user", Text: "which colour?"})
	if page = body(t, f.get(t, f.sessionPath()+"/steer", true)); !strings.Contains(page, `name="answer" aria-label="answer"`) {
		t.Errorf("the model's question has no field:\n%s", page)
	}
}

// TestFormAnswerTakesWordsOnlyForItsButton: the words of t's field go
// with t ("t: use make"), and with no other button of the question.
func TestFormAnswerTakesWordsOnlyForItsButton(t *testing.T) {
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"answer": {"t"}, "takes_words": {"t"}, "words": {"  use\n make  "}}, "t: use make"},
		{url.Values{"answer": {"t"}, "takes_words": {"t"}}, "t"},
		{url.Values{"answer": {"y"}, "words": {"stray"}}, "y"},
		{url.Values{"answer": {"r"}, "takes_words": {"r"}, "words": {"split task 3"}}, "r: split task 3"},
		{url.Values{"answer": {"teal"}}, "teal"},
	} {
		r, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader(c.form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if got := formAnswer(r); got != c.want {
			t.Errorf("form %v answers %q, want %q", c.form, got, c.want)
		}
	}
}
