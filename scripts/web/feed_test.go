package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
)

// stillTarget is a run that takes every steering request and does
// nothing.
type stillTarget struct{}

func (stillTarget) Stop(string) control.Reply      { return control.Done("stop") }
func (stillTarget) Pause() control.Reply           { return control.Done("pause") }
func (stillTarget) Continue() control.Reply        { return control.Done("continue") }
func (stillTarget) Say(string, bool) control.Reply { return control.Done("say") }

// TestFeedIsSharedByFollowers: two pages following a running session
// share the server's one watch of the run's control socket (one feed, two
// followers); each gets every event once, numbered as events.jsonl's
// lines, those before it joined from the file and the rest from the
// watch, and the run's end ends both streams.
func TestFeedIsSharedByFollowers(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := memory.LogPath(root, testSession, memory.EventsLog)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	events := pubsub.NewBroker[event.Event]()
	t.Cleanup(events.Subscribe(context.Background(), func(ev event.Event) {
		if ev.Type != event.TextDelta {
			b, _ := json.Marshal(ev)
			_, _ = log.Write(append(b, '\n'))
		}
	}, pubsub.Sync()))
	run, err := control.Start(control.Options{Root: root, Session: func() (string, string) { return testSession, path }, Mode: "run",
		Target: stillTarget{}, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	say := func(text string) { events.Publish(event.Event{Type: event.Warning, Text: text}) }
	say("one")
	say("two")

	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Options{Addr: ts.Listener.Addr().String(), Fs: afero.NewOsFs(), Token: testToken, Registry: t.TempDir(),
		Sessions: func() []memory.RegistryEntry {
			return []memory.RegistryEntry{{Root: root, SessionID: testSession, Status: "running", UpdatedAt: time.Now()}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	follow := func() <-chan string {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/s/"+projectKey(root)+"/"+testSession+"/events", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		ids := make(chan string, 64)
		go func() {
			defer close(ids)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					ids <- id
				}
				if sc.Text() == "event: end" {
					ids <- "end"
				}
			}
		}()
		return ids
	}
	read := func(ids <-chan string, n int) []string {
		t.Helper()
		var got []string
		for len(got) < n {
			select {
			case id, ok := <-ids:
				if !ok {
					t.Fatalf("the stream ended after %v", got)
				}
				got = append(got, id)
			case <-time.After(5 * time.Second):
				t.Fatalf("after %v, nothing more within 5 s", got)
			}
		}
		return got
	}
	a := follow()
	if got := read(a, 2); strings.Join(got, ",") != "1,2" {
		t.Fatalf("the first page: %v, want 1,2", got)
	}
	say("three")
	b := follow()
	if got := read(b, 3); strings.Join(got, ",") != "1,2,3" {
		t.Fatalf("the second page: %v, want 1,2,3", got)
	}
	s.feeds.mu.Lock()
	f := s.feeds.m[root+"\x00"+testSession]
	s.feeds.mu.Unlock()
	if f == nil || len(s.feeds.m) != 1 {
		t.Fatalf("feeds %v, want one for the run", s.feeds.m)
	}
	f.mu.Lock()
	subs := len(f.subs)
	f.mu.Unlock()
	if subs != 2 {
		t.Fatalf("the feed has %d followers, want 2", subs)
	}
	say("four")
	run.Close()
	if got := read(a, 3); strings.Join(got, ",") != "3,4,end" {
		t.Fatalf("the first page then: %v, want 3,4,end", got)
	}
	if got := read(b, 2); strings.Join(got, ",") != "4,end" {
		t.Fatalf("the second page then: %v, want 4,end", got)
	}
}
