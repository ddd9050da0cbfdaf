package e2e

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/e2e/browser"
)

// Steering from ralph serve's page in real Chromium: stop, an approval
// (its whole command, the terminal's choices, t with the words for the
// model), a model's ask_user and ralph plan's accept and revise, each
// raced with the terminal, and a cross-origin page that tries to stop a
// run.

var servedURL = regexp.MustCompile(`http://\S+\?token=[0-9a-f]{64}`)

// printedURL waits for the URL ralph --serve (or ralph serve) printed in
// what out returns.
func printedURL(t *testing.T, out func() string) string {
	t.Helper()
	waitFor(t, "the web view's URL", 20*time.Second, func() bool { return servedURL.MatchString(out()) })
	return servedURL.FindString(out())
}

// openLiveSession opens the printed URL in Chromium (the token becomes
// its cookie), waits for the index to list a live session, and opens
// that session's page.
func openLiveSession(t *testing.T, printed string) *browser.Page {
	t.Helper()
	page := browser.Open(t, printed)
	link := regexp.MustCompile(`href="(/s/[0-9a-f]+/[^"]+)"`)
	var href string
	waitFor(t, "a live session in the index", 30*time.Second, func() bool {
		var html string
		page.EvalInto(`fetch("/").then(r => r.text())`, &html)
		if m := link.FindStringSubmatch(html); m != nil && strings.Contains(html, `class="live"`) {
			href = m[1]
		}
		return href != ""
	})
	u := strings.SplitN(printed, "/?", 2)[0]
	page = page.OpenTab(u + href)
	page.WaitJS(`!!document.getElementById("steer")`, 20*time.Second)
	return page
}

// TestBrowserServeStopInPage: ralph run --serve works a plan while the
// stand-in model holds its answer (it stalls until ralph goes, so the
// first task is still at work however slow the machine); Stop clicked in the page stops it as
// ralph stop does (exit 130), the reply is shown in the page, the tasks
// are back to open, and the run's record says it was stopped from the
// page, not by ralph stop from another terminal.
func TestBrowserServeStopInPage(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "working on it", Stall: true}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six", "seven", "eight")
	env := cleanEnv(t)
	run, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "--serve")
	page := openLiveSession(t, printedURL(t, errb.String))
	// Mid-task: a task has started and the model is still answering.
	page.WaitJS(`[...document.querySelectorAll("#events li")].some(l => l.textContent.includes("task"))`, 30*time.Second)
	page.Click(`form[action$="/stop"] button`)
	page.WaitJS(`(document.querySelector(".steer-reply") || {}).textContent > ""`, 20*time.Second)
	if code, _ := exitCode(t, run, 30*time.Second); code != 130 {
		t.Fatalf("the run stopped from the page exited %d, want 130 (the page said %q)\n%s", code, page.Text(".steer-reply"), errb.String())
	}
	if reply := page.Text(".steer-reply"); !strings.Contains(strings.ToLower(reply), "stop") {
		t.Errorf("the page shows the reply %q", reply)
	}
	tasks := readFile(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(tasks, "[~]") || strings.Count(tasks, "- [ ]") != 8 {
		t.Fatalf("the tasks are not back to open:\n%s", tasks)
	}
	// The run's record says the stop came from the page (issue 57).
	const said = "stopped by the stop button on ralph serve's page"
	if logs := ralph(t, dir, env, nil, "logs").stdout; !strings.Contains(logs, said) || strings.Contains(logs, "another terminal") {
		t.Errorf("ralph logs, want %q and no other terminal:\n%s", said, logs)
	}
	// --serve ends with the run, so a page that reconnects or asks for
	// its panels once more after the run's last line is refused: that is
	// the server gone, not an error of the page's.
	var errs []string
	for _, e := range page.ConsoleErrors() {
		if !strings.Contains(e, "ERR_CONNECTION_REFUSED") {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserServeApprovalInPage: ralph chat --serve on a terminal asks
// whether a long command may run; the page shows the question live (no
// reload), the whole command as text and the terminal's choices y, n, t,
// a, p; y clicked in the page runs the command, the terminal's prompt goes
// away saying it was answered elsewhere, and the page shows who answered.
// The next question comes to the page live too, and t with words refuses
// it: the model is told those words (TestBrowserServeTellWhyInPage's
// half).
func TestBrowserServeApprovalInPage(t *testing.T) {
	t.Parallel()
	needChromium(t)
	long := "echo ran > ran.txt && echo " + strings.Repeat("every word of a long command is shown ", 6) + "end"
	srv := inlineServer(t, commandScenario(t, [][]string{{long}, {"rm -rf build"}}, "All done."))
	dir := t.TempDir()
	env := chatEnv(t)
	r := startPTY(t, dir, env, "chat", "--serve", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	printed := printedURL(t, func() string { return r.out.Since(0) })
	if n := strings.Count(r.out.Since(0), "?token="); n != 1 {
		t.Fatalf("the URL was printed %d times", n)
	}
	r.typeKeys("go\r")
	r.waitFor("allow? y/n/t/a/p", 20*time.Second)
	page := openLiveSession(t, printed)
	page.WaitJS(`!!document.querySelector(".waiting .question-text")`, 20*time.Second)
	if got := page.Text(".question-text"); !strings.Contains(got, long) {
		t.Fatalf("the page does not show the whole command %q; it shows %q", long, got)
	}
	var offered []string
	page.EvalInto(`[...document.querySelectorAll(".waiting button[name=answer]")].map(b => b.value + " " + b.innerText.trim())`, &offered)
	if got := strings.Join(offered, "|"); got != "y Allow once|n Deny|always Always allow|project Always allow in this project|t Deny and say why" {
		t.Fatalf("the page offers %q", got)
	}
	page.Click(`.waiting button[value="y"]`)
	r.waitFor("answered in ralph serve's page: yes", 20*time.Second)
	// The note under the steering form lasts only until the next question
	// comes, which may be at once; the page's log keeps the line.
	page.WaitJS(`document.body.innerText.includes("answered #1 yes (ralph serve's page)")`, 20*time.Second)
	// The second question arrives in the same page without a reload.
	page.WaitJS(`(document.querySelector(".waiting .question-text") || {}).textContent?.includes("rm -rf build")`, 20*time.Second)
	if got := page.Eval(`document.querySelector(".steer .answered")`); got != nil {
		t.Errorf("the answered note stayed under a new question")
	}
	page.EvalInto(`document.querySelector(".words input[name=words]").value = "use make clean instead"`, new(string))
	page.Click(`.words button[value="t"]`)
	r.waitFor("answered in ralph serve's page: no: use make clean instead", 20*time.Second)
	r.waitFor("All done.", 20*time.Second)
	r.waitIdle(20*time.Second, nil)
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "ran.txt"))); got != "ran" {
		t.Fatalf("ran.txt holds %q: the command approved in the page did not run", got)
	}
	reqs := srv.Requests()
	told := strings.Join(toolResults(reqs[len(reqs)-1])["run_command"], "\n")
	if !strings.Contains(told, "use make clean instead") {
		t.Fatalf("the model was not told the words given with t; it was told:\n%s", told)
	}
	// The page's errors are taken while the chat (and its --serve) is
	// still up: once it leaves, a page that asks again is refused, which
	// is the server gone, not an error of the page's.
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	r.leave(0, 10*time.Second)
}

// TestBrowserServeAskUserInPage: a model's ask_user in ralph run --serve,
// with no terminal, shows in the page with a field; the words typed there
// and sent reach the model as the person's answer.
func TestBrowserServeAskUserInPage(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := inlineServer(t, askScenario(t))
	dir := t.TempDir()
	writeTasks(t, dir, "style the button")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "run", "--retries", "0", "--serve")
	page := openLiveSession(t, printedURL(t, errb.String))
	page.WaitText(".waiting .question-text", "which colour should the button be?", 30*time.Second)
	page.EvalInto(`document.querySelector(".waiting input[name=answer]").value = "teal, like the logo"`, new(string))
	page.Click(`.waiting form.question button`)
	page.WaitText(".steer-reply", "answered", 20*time.Second)
	if code, _ := exitCode(t, run, 30*time.Second); code > 1 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	told := toolResults(srv.Requests()[1])["ask_user"]
	if len(told) != 1 || told[0] != "the person answered: teal, like the logo" {
		t.Fatalf("the model was told %q", told)
	}
}

// TestBrowserServePlanAcceptInPage: ralph plan waits at a terminal with
// its plan; ralph serve's page shows the plan's question with accept,
// revise and drop; revise with words from the page revises it (the
// terminal shows it answered elsewhere), the revised plan's question
// comes to the page live, and accept from the page ends ralph plan with
// the plan written and not started.
func TestBrowserServePlanAcceptInPage(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	env := chatEnv(t)
	r := startPTY(t, dir, env, "--base-url", srv.URL, "plan", "add a cache")
	r.waitFor("your answer (1-2 or words) ›", 20*time.Second)
	r.typeKeys("postgres\r")
	r.waitFor("Accept the plan?", 20*time.Second)
	page := openLiveSession(t, serveURL(t, dir, env))
	page.WaitText(".waiting .question-text", "put the cache in front of postgres", 20*time.Second)
	var offered []string
	page.EvalInto(`[...document.querySelectorAll(".waiting button[name=answer]")].map(b => b.value)`, &offered)
	if strings.Join(offered, " ") != "a d r" {
		t.Fatalf("the plan's question offers %q, want a, d and r (with words)", offered)
	}
	page.EvalInto(`document.querySelector(".words input[name=words]").value = "split the cache task in three"`, new(string))
	page.Click(`.words button[value="r"]`)
	r.waitFor("answered in ralph serve's page: revise: split the cache task in three", 20*time.Second)
	page.WaitText(".waiting .question-text", "expire through the cache", 30*time.Second)
	page.Click(`.waiting button[value="a"]`)
	r.waitFor("answered in ralph serve's page: accept", 20*time.Second)
	r.waitFor("start it when you like with: ralph run", 10*time.Second)
	r.expectExit(0, 20*time.Second)
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if !strings.HasPrefix(tasks, personsTasks) || !strings.Contains(tasks, "cache-expire") || !strings.Contains(tasks, "postgres") {
		t.Fatalf("the accepted, revised plan is not in the task list:\n%s", tasks)
	}
}

// TestBrowserServeCrossOriginPostRefused: a page served from another
// origin on 127.0.0.1 (the same site, so the browser sends ralph's
// SameSite=Strict cookie with it), holding even the right CSRF token,
// posts to the run's stop with fetch and with a form that submits itself:
// both are refused 403 and the run goes on to its end. The model holds
// its answers until the attack is over, so the run (and --serve with it)
// is still there to be attacked however slow the machine.
func TestBrowserServeCrossOriginPostRefused(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv, release := gatedRunModel(t, 0)
	t.Cleanup(release)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three")
	env := cleanEnv(t)
	run, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "--serve")
	page := openLiveSession(t, printedURL(t, errb.String))
	stop := page.Eval(`document.querySelector('form[action$="/stop"]').action`).(string)
	csrf := page.Eval(`document.querySelector('form[action$="/stop"] input[name=csrf]').value`).(string)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// The fetch is sent first (keepalive: the navigation does not
		// cancel it), then the form submits itself while the page is
		// still loading, so the tab's first load ends on the answer.
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s"><input name="csrf" value="%s"></form>
<script>
fetch(%q, {method: "POST", mode: "no-cors", credentials: "include", keepalive: true, body: new URLSearchParams({csrf: %q})});
document.getElementById("f").submit();
</script>`, stop, csrf, stop, csrf)
	}))
	t.Cleanup(evil.Close)
	attack := page.OpenTab(evil.URL)
	// The form's post comes back as the server's 403 page.
	attack.WaitText("body", "cross-origin request refused", 20*time.Second)
	sent := 0
	for _, u := range attack.Requests() {
		if u == stop {
			sent++
		}
	}
	if sent != 2 {
		t.Fatalf("the hostile page sent %d requests to %s, want 2 (fetch and form): %q", sent, stop, attack.Requests())
	}
	release()
	if code, _ := exitCode(t, run, 60*time.Second); code != 0 {
		t.Fatalf("the run exited %d after a cross-origin stop, want 0 (it was not to be stopped)\n%s\n%s", code, out.String(), errb.String())
	}
	if done := readFile(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Count(done, "- [x]") != 3 {
		t.Fatalf("the run did not finish its tasks:\n%s", done)
	}
}

// TestServeFlagOnAOneShot: ralph --serve "task" (a one-shot, without a
// terminal, waiting for answers) prints its web view's URL once on
// stderr; the page answers its approval with y, from the page's own
// origin, and the command runs.
func TestServeFlagOnAOneShot(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "all done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "--serve", "make ran.txt")
	printed := printedURL(t, errb.String)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	_ = getPage(t, c, printed)
	base := strings.SplitN(printed, "/?", 2)[0]
	link := regexp.MustCompile(`href="(/s/[0-9a-f]+/[^"]+)"`)
	var path, page string
	waitFor(t, "the approval on the one-shot's page", 20*time.Second, func() bool {
		m := link.FindStringSubmatch(getPage(t, c, base+"/"))
		if m == nil {
			return false
		}
		path, page = m[1], getPage(t, c, base+m[1]+"/steer")
		return strings.Contains(page, `class="question-text"`)
	})
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	qid := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(page)
	if reply := postForm(t, c, base, path+"/answer", url.Values{"csrf": {csrf[1]}, "id": {qid[1]}, "answer": {"y"}}); !strings.Contains(reply, `"ok":true`) {
		t.Fatalf("y from the page: %s", reply)
	}
	if code, _ := exitCode(t, cmd, 30*time.Second); code != 0 {
		t.Fatalf("the one-shot exited %d\n%s", code, errb.String())
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "ran.txt"))); got != "ran" {
		t.Fatalf("ran.txt holds %q: the approved command did not run", got)
	}
	if n := strings.Count(errb.String(), "?token="); n != 1 {
		t.Fatalf("the URL was printed %d times:\n%s", n, errb.String())
	}
}
