package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWebFetchLoopbackRefusedBeforeAsking: at a terminal, web_fetch of a
// literal loopback address or localhost is refused before the approval
// question (whose "yes", and "always", could never work), in one
// sentence naming web_fetch_allow_private, and nothing reaches the
// server; with web_fetch_allow_private the same fetch is asked about as
// any domain is.
func TestWebFetchLoopbackRefusedBeforeAsking(t *testing.T) {
	t.Parallel()
	page, hits := webServer(t)
	port := page.URL[strings.LastIndex(page.URL, ":")+1:]
	fetch := func(url string) toolCall {
		args, _ := json.Marshal(map[string]string{"url": url})
		return toolCall{name: "web_fetch", args: string(args)}
	}
	urls := []string{page.URL + "/a", "http://localhost:" + port + "/b", "http://[::ffff:127.0.0.1]:" + port + "/c", "http://app.localhost:" + port + "/d"}
	var turns [][]toolCall
	for _, u := range urls {
		turns = append(turns, []toolCall{fetch(u)})
	}
	srv := inlineServer(t, toolScenario(t, "fetch_private", turns, "Finished."))
	r := startPTY(t, t.TempDir(), chatEnv(t), "--base-url", srv.URL, "read the pages")
	r.waitFor("Finished.", 20*time.Second)
	r.typeKeys("\x04")
	r.expectExit(0, 10*time.Second)
	if strings.Contains(r.screen(), "call `web_fetch`?") || strings.Contains(r.screen(), "[a]lways") {
		t.Errorf("a fetch of the loopback was asked about:\n%s", r.screen())
	}
	if hits.Load() != 0 {
		t.Errorf("the server got %d requests", hits.Load())
	}
	reqs := srv.Requests()
	if len(reqs) != len(urls)+1 {
		t.Fatalf("the model was asked %d times, want %d", len(reqs), len(urls)+1)
	}
	for i, want := range []string{
		"web_fetch was not done: 127.0.0.1 is a loopback or private-network address, which web_fetch reaches only when the user sets web_fetch_allow_private = true in their user config",
		"web_fetch was not done: localhost is this machine's loopback, which web_fetch reaches only when the user sets web_fetch_allow_private = true in their user config",
		"web_fetch was not done: ::ffff:127.0.0.1 is a loopback or private-network address, which web_fetch reaches only when the user sets web_fetch_allow_private = true in their user config",
		"web_fetch was not done: app.localhost is this machine's loopback, which web_fetch reaches only when the user sets web_fetch_allow_private = true in their user config",
	} {
		msgs := reqs[i+1].Request.Messages
		if got := msgs[len(msgs)-1].Content; got != want {
			t.Errorf("fetch %d (%s): the model was told %q\nwant %q", i+1, urls[i], got, want)
		}
	}
}

// TestWebFetchLoopbackAskedWhenAllowed: with web_fetch_allow_private the
// loopback is asked about as today, and a yes fetches the page.
func TestWebFetchLoopbackAskedWhenAllowed(t *testing.T) {
	t.Parallel()
	page, hits := webServer(t)
	args, _ := json.Marshal(map[string]string{"url": page.URL + "/a"})
	srv := inlineServer(t, toolScenario(t, "fetch_private_allowed", [][]toolCall{{{name: "web_fetch", args: string(args)}}}, "Finished."))
	env := chatEnv(t)
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "web_fetch_allow_private = true\n")
	r := startPTY(t, t.TempDir(), env, "--base-url", srv.URL, "read the page")
	r.waitFor("[a]lways fetches from 127.0.0.1 without asking", 20*time.Second)
	r.typeKeys("y\r")
	r.waitFor("Finished.", 20*time.Second)
	r.typeKeys("\x04")
	r.expectExit(0, 10*time.Second)
	if hits.Load() != 1 {
		t.Errorf("the server got %d requests, want 1", hits.Load())
	}
}
