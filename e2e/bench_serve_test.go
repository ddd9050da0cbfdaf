package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// serveClient starts ralph serve with env and returns a client holding
// its cookie (it has opened the printed URL, and so the index, once) and
// the server's address.
func serveClient(b testing.TB, dir string, env []string) (*http.Client, string) {
	b.Helper()
	printed := serveURL(b, dir, env)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	resp, err := c.Get(printed)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(printed)
	return c, "http://" + u.Host
}

// dataLast is the number of events a session page was rendered up to.
var dataLast = regexp.MustCompile(`data-last="(\d+)"`)

// follow does what a browser following a session page does: it loads the
// page, then opens its event stream from the number the page was rendered
// up to, and reads it to its end. open is called once the stream is open;
// it returns how many events it read.
func follow(c *http.Client, base, page string, open func()) (int, error) {
	resp, err := c.Get(base + page)
	if err != nil {
		return 0, err
	}
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if m := dataLast.FindStringSubmatch(sc.Text()); m != nil {
			last = m[1]
		}
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, base+page+"/events?last="+last, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the event stream: %s", resp.Status)
	}
	open()
	n := 0
	sc = bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		switch {
		case sc.Text() == "event: end":
			return n, nil
		case strings.HasPrefix(sc.Text(), "id: "):
			n++
		}
	}
	return n, fmt.Errorf("the event stream ended without its end event after %d events", n)
}

// BenchmarkServeFollowers20: what 20 browsers following one run through
// ralph serve cost the run. The run is BenchmarkChildren64's (64 children,
// 3 model rounds each, 20 ms an answer, --parallel 64), each trial paired
// with the same run unfollowed, in alternating order. A follower is a Go
// client doing what a browser's page does: it loads the session page,
// then reads its event stream (server-sent events over the run's control
// socket) to its end. The model holds its first answer until the 20
// streams are open (at once when there are none), so every follower
// follows the whole run; each run's span is measured at the model from
// that first answer's end to the last answer's end. followed/alone is the
// median of the paired ratios of the spans (target: under 1.05, 5 %);
// cpu-followed/alone that of ralph's own CPU time (user and system), which
// a busy machine disturbs less than the wall time.
func BenchmarkServeFollowers20(b *testing.B) {
	const followers = 20
	var mu sync.Mutex
	var gate chan struct{}
	model := fleetModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if len(msgs) > 0 && msgs[len(msgs)-1].Role == "user" && !strings.HasPrefix(msgs[0].Content, "You are a child agent") {
			mu.Lock()
			g := gate
			mu.Unlock()
			select {
			case <-g:
			case <-time.After(30 * time.Second):
			}
		}
		return model(r)
	})
	b.Cleanup(srv.Close)
	env := cleanEnv(b)
	c, base := serveClient(b, b.TempDir(), env)
	n := trials(b, 7)
	var ratios, cpuRatios, followed, bare []time.Duration
	span := func(watchers int) (time.Duration, time.Duration) {
		g := make(chan struct{})
		mu.Lock()
		gate = g
		mu.Unlock()
		if watchers == 0 {
			close(g)
		}
		dir := b.TempDir()
		before := len(srv.Requests())
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--parallel", "64", "--json", "spawn 64 rounds=3 delay=20")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, watchers)
		if watchers > 0 {
			var page string
			waitFor(b, "the run in ralph serve's index", 20*time.Second, func() bool {
				ids, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*"))
				if len(ids) != 1 {
					return false
				}
				resp, err := c.Get(base + "/")
				if err != nil {
					return false
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<24)
				re := regexp.MustCompile(`href="(/s/[0-9a-f]+/` + regexp.QuoteMeta(filepath.Base(ids[0])) + `)"`)
				for sc.Scan() {
					if m := re.FindStringSubmatch(sc.Text()); m != nil {
						page = m[1]
					}
				}
				return page != ""
			})
			var opened sync.WaitGroup
			opened.Add(watchers)
			for range watchers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					once := sync.OnceFunc(opened.Done)
					defer once()
					if got, err := follow(c, base, page, once); err != nil || got == 0 {
						errs <- fmt.Errorf("a follower read %d events: %v", got, err)
					}
				}()
			}
			opened.Wait()
			close(g)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("the run: %v", err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		reqs := srv.Requests()[before:]
		if len(reqs) != 2+64*3 {
			b.Fatalf("%d requests, want %d", len(reqs), 2+64*3)
		}
		first := reqs[0].Received.Add(reqs[0].Served)
		var last time.Time
		for _, r := range reqs {
			if end := r.Received.Add(r.Served); end.After(last) {
				last = end
			}
		}
		return last.Sub(first), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	span(0) // warms the model server, ralph's files and the page cache
	ratio := func(a, b time.Duration) time.Duration {
		return time.Duration(float64(time.Millisecond) * float64(a) / float64(b))
	}
	for i := range n {
		var f, o, fc, oc time.Duration
		if i%2 == 0 {
			f, fc = span(followers)
			o, oc = span(0)
		} else {
			o, oc = span(0)
			f, fc = span(followers)
		}
		followed, bare = append(followed, f), append(bare, o)
		ratios, cpuRatios = append(ratios, ratio(f, o)), append(cpuRatios, ratio(fc, oc))
		b.Logf("pair %d: followed by %d %v (cpu %v), alone %v (cpu %v)", i, followers, f.Round(time.Millisecond), fc.Round(time.Millisecond),
			o.Round(time.Millisecond), oc.Round(time.Millisecond))
	}
	b.ReportMetric(ms(percentile(followed, 0.5)), "followed-span-ms")
	b.ReportMetric(ms(percentile(bare, 0.5)), "alone-span-ms")
	b.ReportMetric(ms(percentile(ratios, 0.5)), "followed/alone")
	b.ReportMetric(ms(percentile(cpuRatios, 0.5)), "cpu-followed/alone")
}

// BenchmarkServeIdleMemory: the resident memory of ralph serve over a
// registry of 50 sessions (10 projects of 5 one-shots), after it has
// served the index once and settled.
func BenchmarkServeIdleMemory(b *testing.B) {
	srv := inlineServer(b, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
	env := cleanEnv(b)
	for range 10 {
		dir := b.TempDir()
		for j := range 5 {
			cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--json", fmt.Sprintf("say hi %d", j))
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	}
	var rss []time.Duration // KB, stored as durations to reuse percentile
	for range trials(b, 3) {
		cmd := exec.Command(ralphBin, "serve", "--addr", "127.0.0.1:0")
		cmd.Dir, cmd.Env = b.TempDir(), env
		errb := &lockedBuffer{}
		cmd.Stderr = errb
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		re := regexp.MustCompile(`http://\S+\?token=[0-9a-f]{64}`)
		waitFor(b, "ralph serve's URL", 10*time.Second, func() bool { return re.MatchString(errb.String()) })
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
		resp, err := c.Get(re.FindString(errb.String()))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		listed := 0
		for sc.Scan() {
			listed += strings.Count(sc.Text(), `<tr data-key=`)
		}
		resp.Body.Close()
		if listed != 50 {
			b.Fatalf("the index lists %d sessions, want 50", listed)
		}
		time.Sleep(300 * time.Millisecond)
		kb := residentKB(b, cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		rss = append(rss, time.Duration(kb))
	}
	b.ReportMetric(float64(percentile(rss, 0.5))/1024, "idle-rss-MB")
}
