package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// fleetServer serves one session of a project whose run on Temporal
// answers the status query with fleet(n), n counting the queries from 1.
func fleetServer(t *testing.T, fleet func(n int) (remote.Status, bool, error)) string {
	t.Helper()
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, memory.LogPath(testRoot, testSession, memory.EventsLog), []byte(`{"type":"turn_started","turn":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Options{Addr: ts.Listener.Addr().String(), Fs: fs, Token: testToken,
		Sessions: func() []memory.RegistryEntry {
			return []memory.RegistryEntry{{Root: testRoot, SessionID: testSession, Status: "running", UpdatedAt: time.Now()}}
		},
		Fleet: func(_ context.Context, root string) (remote.Status, bool, error) {
			if root != testRoot {
				t.Errorf("the fleet of %q was asked for", root)
			}
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			return fleet(k)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL + "/s/" + projectKey(testRoot) + "/" + testSession
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

// aFleet is a run of four tasks on two workers; a title and a worker's
// name hold what would run in a page served raw.
func aFleet() remote.Status {
	return remote.Status{WorkflowID: "ralph:/r.git#main", SessionID: testSession, Status: "running", Running: []string{"t2", "t3"}, Iterations: 4,
		Counts: memory.TaskCounts{Done: 1, Open: 1, InProgress: 2, Total: 4},
		Tasks: []remote.FleetTask{
			{ID: "t1", Title: "write one", State: planfile.TaskDone, Attempt: 1, Worker: "hostA:11"},
			{ID: "t2", Title: hostile, State: planfile.TaskInProgress, Attempt: 2, Worker: "hostA:11", Phase: "working"},
			{ID: "t3", Title: "write three", State: planfile.TaskInProgress, Attempt: 1, Worker: `<img src=x onerror=alert(6)>:22`, Phase: "pushing"},
			{ID: "t4", Title: "write four", State: planfile.TaskOpen},
		}}
}

func TestFleetShowsTheTasksAcrossTheirWorkersInert(t *testing.T) {
	url := fleetServer(t, func(int) (remote.Status, bool, error) { return aFleet(), true, nil })
	for _, page := range []string{getPage(t, url), getPage(t, url+"/fleet")} {
		for _, want := range []string{
			`<section id="fleet"`, `data-src="/s/` + projectKey(testRoot) + `/` + testSession + `/fleet"`,
			`1</span> of 4 tasks done`, `2 in flight`, `4 attempts`,
			`<tr data-task="t1" data-state="done" data-worker="hostA:11">`,
			`<tr data-task="t2" data-state="in_progress" data-worker="hostA:11">`,
			`<li data-worker="hostA:11"><b>hostA:11</b>: holds t2 · 1 done</li>`,
			`in progress (working)`,
			`&lt;script&gt;alert(1)&lt;/script&gt;`, `&lt;img src=x onerror=alert(6)&gt;:22`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the fleet lacks %q:\n%s", want, page)
			}
		}
		for _, bad := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(page, bad) {
				t.Errorf("the fleet holds %q raw:\n%s", bad, page)
			}
		}
	}
}

func TestFleetFragmentWaitsForABegunTaskToReachAWorker(t *testing.T) {
	url := fleetServer(t, func(n int) (remote.Status, bool, error) {
		st := aFleet()
		if n < 3 {
			// Begun, not yet taken by a worker.
			st.Tasks[2].Worker, st.Tasks[2].Phase = "", ""
		}
		return st, true, nil
	})
	if got := getPage(t, url+"/fleet"); !strings.Contains(got, `data-task="t3" data-state="in_progress" data-worker="&lt;img`) {
		t.Errorf("the fragment did not wait for t3's worker:\n%s", got)
	}
}

func TestNoFleetWithoutARunOnTemporalOfThatSession(t *testing.T) {
	cases := map[string]func(int) (remote.Status, bool, error){
		"not on Temporal": func(int) (remote.Status, bool, error) { return remote.Status{}, false, nil },
		"another session": func(int) (remote.Status, bool, error) {
			st := aFleet()
			st.SessionID = "s0"
			return st, true, nil
		},
	}
	for name, fleet := range cases {
		url := fleetServer(t, fleet)
		if page := getPage(t, url); strings.Contains(page, `id="fleet"`) {
			t.Errorf("%s: the page shows a fleet:\n%s", name, page)
		}
		if frag := getPage(t, url+"/fleet"); strings.TrimSpace(frag) != "" {
			t.Errorf("%s: the fragment is %q", name, frag)
		}
	}
}

func TestFleetQueryErrorIsShownInert(t *testing.T) {
	url := fleetServer(t, func(int) (remote.Status, bool, error) {
		return remote.Status{}, true, errors.New("cannot reach <script>alert(7)</script>")
	})
	page := getPage(t, url)
	if !strings.Contains(page, `<p class="error">cannot reach &lt;script&gt;alert(7)&lt;/script&gt;</p>`) {
		t.Errorf("the page does not say why there is no fleet:\n%s", page)
	}
}
