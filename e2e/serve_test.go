package e2e

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// startServe starts ralph serve on a free loopback port and returns a
// client that has opened the printed URL (so it holds the cookie) and
// the server's address.
func startServe(t *testing.T, dir string, env []string, args ...string) (*http.Client, string) {
	t.Helper()
	printed := serveURL(t, dir, env, args...)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	resp, err := c.Get(printed)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" {
		t.Fatalf("the printed URL: %d at %s, want 200 at the URL without the token", resp.StatusCode, resp.Request.URL)
	}
	u, _ := url.Parse(printed)
	return c, "http://" + u.Host
}

// serveURL starts ralph serve on a free loopback port and returns the URL
// it printed, token included.
func serveURL(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(ralphBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	errb := &lockedBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	re := regexp.MustCompile(`http://\S+\?token=[0-9a-f]{64}`)
	waitFor(t, "ralph serve's URL", 10*time.Second, func() bool { return re.MatchString(errb.String()) })
	return re.FindString(errb.String())
}

func getPage(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b.String())
	}
	return b.String()
}

// followSSE reads a session's event stream, from after last, and hands
// each event's id to fn until fn says stop or the stream ends; it reports
// whether the stream ended.
func followSSE(t *testing.T, c *http.Client, u string, last string, fn func(id string) bool) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if sc.Text() == "event: end" {
			return true
		}
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok && !fn(id) {
			return false
		}
	}
	return false
}

// TestServeFollowsARun: ralph serve lists a running ralph run as live,
// streams its events as they happen, resumes a dropped stream from its
// Last-Event-ID with no event lost or doubled (the same ids as the
// finished session's stream read from its records), steers it (pause and
// continue from a form, with the page's CSRF token), and refuses a
// request without the token.
func TestServeFollowsARun(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		resp := taskChildModel()(r)
		resp.ChunkSize, resp.ChunkDelayMS = 2, 5
		return resp
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run")
	waitSocket(t, dir, env)
	c, base := startServe(t, dir, env)

	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %v %v, want 401", resp, err)
	}
	id := filepath.Base(sessionDir(t, dir))
	index := getPage(t, c, base+"/")
	link := regexp.MustCompile(`href="(/s/[0-9a-f]+/` + regexp.QuoteMeta(id) + `)"`).FindStringSubmatch(index)
	if link == nil || !strings.Contains(index, `class="live"`) {
		t.Fatalf("the index does not list session %s as live:\n%s", id, index)
	}
	page := getPage(t, c, base+link[1])
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("the live session's page has no steering forms:\n%s", page)
	}
	for _, op := range []string{"pause", "continue"} {
		if reply := postForm(t, c, base, link[1]+"/"+op, url.Values{"csrf": {csrf[1]}}); !strings.Contains(reply, `"ok":true`) {
			t.Fatalf("%s from the page: %s", op, reply)
		}
	}

	// Follow the live stream for a few events, drop it, and go on from
	// the last id seen.
	events := base + link[1] + "/events"
	var got []string
	ended := followSSE(t, c, events, "", func(id string) bool {
		got = append(got, id)
		return len(got) < 5
	})
	if !ended {
		followSSE(t, c, events, got[len(got)-1], func(id string) bool {
			got = append(got, id)
			return true
		})
	}
	if code, _ := exitCode(t, run, 60*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	var want []string
	followSSE(t, c, events, "", func(id string) bool {
		want = append(want, id)
		return true
	})
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the live stream, dropped and resumed, gave ids\n%v\nthe finished session's stream\n%v", got, want)
	}
	if len(want) < 20 {
		t.Fatalf("only %d events: the run was too short to test much", len(want))
	}
	page = getPage(t, c, base+link[1])
	if n := strings.Count(page, "<li class="); n != len(want) {
		t.Fatalf("the finished page shows %d events, its stream %d", n, len(want))
	}
}

// TestServeFlagStopsTheRunFromThePage: ralph run --serve prints its web
// view's URL once on stderr; the page shows the live session, its stream
// brings events as they happen, and Stop in the page stops the run as
// ralph stop does (exit 130, the tasks back to open).
func TestServeFlagStopsTheRunFromThePage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		resp := taskChildModel()(r)
		resp.ChunkSize, resp.ChunkDelayMS = 1, 100
		return resp
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six", "seven", "eight")
	env := cleanEnv(t)
	run, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "--serve")
	re := regexp.MustCompile(`http://\S+\?token=[0-9a-f]{64}`)
	waitFor(t, "ralph run --serve's URL", 10*time.Second, func() bool { return re.MatchString(errb.String()) })
	printed := re.FindString(errb.String())
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	u, _ := url.Parse(printed)
	base := "http://" + u.Host
	_ = getPage(t, c, printed)
	var link []string
	waitFor(t, "the live session in the index", 10*time.Second, func() bool {
		link = regexp.MustCompile(`href="(/s/[0-9a-f]+/[^"]+)"`).FindStringSubmatch(getPage(t, c, base+"/"))
		return link != nil
	})
	seen := 0
	followSSE(t, c, base+link[1]+"/events", "", func(string) bool {
		seen++
		return seen < 3
	})
	page := getPage(t, c, base+link[1])
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("the live session's page has no steering forms:\n%s", page)
	}
	reply := postForm(t, c, base, link[1]+"/stop", url.Values{"csrf": {csrf[1]}})
	if code, _ := waitCmd(t, run, 30*time.Second, func() string { return "the stop's reply: " + reply + "\n" + errb.String() }); code != 130 {
		t.Fatalf("the run stopped from the page (reply %s, after %d events) exited %d, want 130\n%s", reply, seen, code, errb.String())
	}
	if n := strings.Count(errb.String(), "?token="); n != 1 {
		t.Fatalf("the URL was printed %d times:\n%s", n, errb.String())
	}
	if tasks := readFile(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Contains(tasks, "[~]") || !strings.Contains(tasks, "- [ ]") {
		t.Fatalf("the tasks are not back to open:\n%s", tasks)
	}
}

// TestServeAnswersAnApproval: the page of a ralph waiting for an approval
// shows the question with the answers it takes; y from the page runs the
// command, as ralph answer y would, and the session records who answered.
func TestServeAnswersAnApproval(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "all done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "make ran.txt")
	waitSocket(t, dir, env)
	c, base := startServe(t, dir, env)
	var link []string
	var page string
	waitFor(t, "the approval on the page", 20*time.Second, func() bool {
		link = regexp.MustCompile(`href="(/s/[0-9a-f]+/[^"]+)"`).FindStringSubmatch(getPage(t, c, base+"/"))
		if link == nil {
			return false
		}
		page = getPage(t, c, base+link[1])
		return strings.Contains(page, `class="question"`)
	})
	if !strings.Contains(page, "echo ran &gt; ran.txt") || !strings.Contains(page, `value="y"`) {
		t.Fatalf("the question lacks the whole command or its answers:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	qid := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(page)
	if reply := postForm(t, c, base, link[1]+"/answer", url.Values{"csrf": {csrf[1]}, "id": {qid[1]}, "answer": {"y"}}); !strings.Contains(reply, `"ok":true`) {
		t.Fatalf("y from the page: %s", reply)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s", code, errb.String())
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "ran.txt"))); got != "ran" {
		t.Fatalf("ran.txt holds %q: the approved command did not run", got)
	}
	if page := getPage(t, c, base+link[1]); !strings.Contains(page, "#1 yes") {
		t.Fatalf("the finished page does not show the answer:\n%s", page)
	}
}

// postForm sends a page's form as a browser would (same Origin), asking
// for the reply object, and returns it.
func postForm(t *testing.T, c *http.Client, base, path string, form url.Values) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestServeAnswersAModelsQuestion: a model's ask_user question in a
// ralph run shows on the page with a field for words; the words sent
// from the page reach the model as the person's answer.
func TestServeAnswersAModelsQuestion(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, askScenario(t))
	dir := t.TempDir()
	writeTasks(t, dir, "style the button")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "run", "--retries", "0")
	waitSocket(t, dir, env)
	c, base := startServe(t, dir, env)
	var link []string
	var page string
	waitFor(t, "the model's question on the page", 20*time.Second, func() bool {
		link = regexp.MustCompile(`href="(/s/[0-9a-f]+/[^"]+)"`).FindStringSubmatch(getPage(t, c, base+"/"))
		if link == nil {
			return false
		}
		page = getPage(t, c, base+link[1])
		return strings.Contains(page, "which colour should the button be?") && strings.Contains(page, `name="answer" aria-label`)
	})
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	qid := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(page)
	if reply := postForm(t, c, base, link[1]+"/answer", url.Values{"csrf": {csrf[1]}, "id": {qid[1]}, "answer": {"teal, like the logo"}}); !strings.Contains(reply, `"ok":true`) {
		t.Fatalf("the answer from the page: %s", reply)
	}
	if code, _ := exitCode(t, cmd, 30*time.Second); code > 1 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	told := toolResults(srv.Requests()[1])["ask_user"]
	if len(told) != 1 || told[0] != "the person answered: teal, like the logo" {
		t.Fatalf("the model was told %q", told)
	}
}
