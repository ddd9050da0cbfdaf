package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fetchBombConfig lets web_fetch reach the local server that stands in
// for a web page, as the other web_fetch tests do.
const fetchBombConfig = "web_fetch_allow_private = true\nweb_fetch_allow = [\"127.0.0.1\"]\n"

// pageServer serves body as HTML at every path and closes served once
// it has written a whole body.
func pageServer(t *testing.T, body string) (srv *httptest.Server, served chan struct{}) {
	t.Helper()
	served = make(chan struct{})
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
		once.Do(func() { close(served) })
	}))
	t.Cleanup(srv.Close)
	return srv, served
}

// fetchBombSetup is a project, an environment whose person allows
// web_fetch on the loopback, and a stand-in model that calls web_fetch
// on url once.
func fetchBombSetup(t *testing.T, url string) (dir string, env []string, model string, requests func() int, lastResult func() string) {
	t.Helper()
	dir = t.TempDir()
	env = cleanEnv(t)
	mustWrite(t, filepath.Join(envValue(env, "HOME"), ".config", "ralph", "config.toml"), fetchBombConfig)
	call, _ := json.Marshal(map[string]string{"url": url})
	srv := inlineServer(t, toolScenario(t, "fetchbomb", [][]toolCall{{{name: "web_fetch", args: string(call)}}}, "done"))
	return dir, env, srv.URL, func() int { return len(srv.Requests()) }, func() string {
		reqs := srv.Requests()
		if len(reqs) < 2 {
			return ""
		}
		msgs := reqs[1].Request.Messages
		return msgs[len(msgs)-1].Content
	}
}

// TestWebFetchDeeplyNestedPageComesAsText: a 2 MB page of 400,000 nested
// <div>s (under the read cap) kept the HTML parser busy for many minutes;
// now the one-shot ends well within a minute and the model gets the
// page's text, told why it is text.
func TestWebFetchDeeplyNestedPageComesAsText(t *testing.T) {
	t.Parallel()
	page, _ := pageServer(t, "<html><body>"+strings.Repeat("<div>", 400_000)+"the bottom of the page")
	dir, env, model, requests, last := fetchBombSetup(t, page.URL+"/page")
	r := ralphWithin(t, 60*time.Second, ralphBin, dir, env, nil, "--base-url", model, "--json", "read the page")
	if requests() < 2 {
		t.Fatalf("the model was asked %d times, want 2\nexit %d\n%s\n%s", requests(), r.code, r.stdout, r.stderr)
	}
	got := last()
	for _, want := range []string{"nested too deeply to convert", "so it comes as text", "the bottom of the page"} {
		if !strings.Contains(got, want) {
			t.Errorf("the result lacks %q:\n%.2000s", want, got)
		}
	}
	t.Logf("the one-shot took %s", r.dur)
}

// TestWebFetchHardStopDuringConversion: SIGINT or SIGTERM while a page
// within the nesting bound but slow to convert (quotes 250 deep, whose
// markdown grows with every level) is being converted ends ralph at
// once with 130 or 143: the tool call no longer waits for the converter.
func TestWebFetchHardStopDuringConversion(t *testing.T) {
	t.Parallel()
	body := strings.Repeat(strings.Repeat("<blockquote>x\n", 250)+strings.Repeat("</blockquote>", 250), 2<<20/7000)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			t.Parallel()
			page, served := pageServer(t, body)
			dir, env, model, _, _ := fetchBombSetup(t, page.URL+"/page")
			cmd, _, errb := startRalph(t, dir, env, "--base-url", model, "--json", "read the page")
			select {
			case <-served:
			case <-time.After(30 * time.Second):
				t.Fatalf("ralph never fetched the page; stderr %s", errb.String())
			}
			// Past the read, into the conversion.
			time.Sleep(500 * time.Millisecond)
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code, took := exitCode(t, cmd, 10*time.Second)
			if code != c.code {
				t.Fatalf("exit %d after %s, want %d; stderr %s", code, c.sig, c.code, errb.String())
			}
			t.Logf("%s to exit: %s", c.sig, took)
		})
	}
}
