package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// TestOneSessionsPagesReadThatSessionAlone: where Options.Session reads
// one session, its page and its event stream are served without listing
// every session (Sessions is not called); an entry Session answers for
// another key or id than the path's is not taken; the index still lists
// them all.
func TestOneSessionsPagesReadThatSessionAlone(t *testing.T) {
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, memory.LogPath(testRoot, testSession, memory.EventsLog), []byte(`{"type":"assistant","text":"all done"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	entry := memory.RegistryEntry{Root: testRoot, SessionID: testSession, Status: "done", UpdatedAt: time.Now()}
	var listed, found atomic.Int32
	s, err := New(Options{Addr: "127.0.0.1:7777", Fs: fs, Token: testToken,
		Sessions: func() []memory.RegistryEntry {
			listed.Add(1)
			return []memory.RegistryEntry{entry}
		},
		Session: func(key, id string) (memory.RegistryEntry, bool) {
			found.Add(1)
			switch {
			case key == projectKey(testRoot) && id == testSession:
				return entry, true
			case id == "liar": // answers with another session than asked
				return entry, true
			}
			return memory.RegistryEntry{}, false
		}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7777"+path, nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		return w
	}
	page := "/s/" + projectKey(testRoot) + "/" + testSession
	if w := get(page); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "all done") {
		t.Fatalf("the session's page: %d\n%s", w.Code, w.Body.String())
	}
	if w := get(page + "/events"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "event: end") {
		t.Fatalf("the session's stream: %d\n%s", w.Code, w.Body.String())
	}
	if n := listed.Load(); n != 0 {
		t.Fatalf("serving one session listed every session %d times", n)
	}
	for _, path := range []string{"/s/" + projectKey(testRoot) + "/liar", "/s/" + projectKey("/other") + "/" + testSession, "/s/" + projectKey(testRoot) + "/s2"} {
		if w := get(path); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, w.Code)
		}
	}
	if found.Load() == 0 {
		t.Fatal("Options.Session was never asked")
	}
	if w := get("/"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), testSession) || listed.Load() == 0 {
		t.Fatalf("the index: %d, listed %d times\n%s", w.Code, listed.Load(), w.Body.String())
	}
}
