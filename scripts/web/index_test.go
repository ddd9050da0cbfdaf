package web

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// TestIndexStreamShowsANewSession: the index's event stream sends every
// listed session once, then, when a file in the registry directory is
// replaced (as memory.Registry.Update does when a session starts), the
// new session, and nothing for a session that did not change; a session
// no longer listed is "gone".
func TestIndexStreamShowsANewSession(t *testing.T) {
	reg := t.TempDir()
	var mu sync.Mutex
	entries := []memory.RegistryEntry{{Root: "/a", SessionID: "s1", Status: "completed", UpdatedAt: time.Now().Add(-time.Hour)}}
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Options{Addr: ts.Listener.Addr().String(), Fs: afero.NewMemMapFs(), Token: testToken, Registry: reg,
		Sessions: func() []memory.RegistryEntry {
			mu.Lock()
			defer mu.Unlock()
			return append([]memory.RegistryEntry(nil), entries...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	if resp, err := http.Get(ts.URL + "/events"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the index's stream without the token: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/events", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("GET /events: %d %s", resp.StatusCode, ct)
	}
	type ev struct{ typ, data string }
	events := make(chan ev, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var typ string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				typ = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- ev{typ, v}
			}
		}
		close(events)
	}()
	next := func() (string, indexRow) {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			var x indexRow
			if err := json.Unmarshal([]byte(e.data), &x); err != nil {
				t.Fatalf("%s: %v", e.data, err)
			}
			return e.typ, x
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5 s")
		}
		return "", indexRow{}
	}
	if typ, x := next(); typ != "session" || x.ID != "s1" || x.Href != "/s/"+projectKey("/a")+"/s1" || x.Status != "completed" {
		t.Fatalf("first event %s %+v, want the listed session", typ, x)
	}
	mu.Lock()
	entries = append(entries, memory.RegistryEntry{Root: "/b", SessionID: "s2", Status: "running", UpdatedAt: time.Now()})
	mu.Unlock()
	start := time.Now()
	tmp := filepath.Join(reg, "projects.json.tmp")
	if err := os.WriteFile(tmp, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(reg, "projects.json")); err != nil {
		t.Fatal(err)
	}
	if typ, x := next(); typ != "session" || x.ID != "s2" || x.Status != "running" || x.Updated == 0 {
		t.Fatalf("after the registry changed: %s %+v, want the new session alone", typ, x)
	}
	t.Logf("the new session was sent %v after the registry changed", time.Since(start).Round(time.Millisecond))
	mu.Lock()
	entries = entries[1:]
	mu.Unlock()
	if err := os.WriteFile(filepath.Join(reg, "projects.json"), []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if typ, x := next(); typ != "gone" || x.Key != projectKey("/a")+"/s1" {
		t.Fatalf("after a session left the listing: %s %+v, want it gone", typ, x)
	}
}
