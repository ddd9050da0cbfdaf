package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWebFetchAlwaysForADomain: at a terminal, web_fetch of a domain no
// rule allows is asked about, with "always" offered for that domain (and
// no project-wide always); answered "always", a second fetch from the same
// domain is not asked about, a fetch from another domain is, and the
// domain is saved in web_fetch_allow of the person's own config, beside
// what it held.
func TestWebFetchAlwaysForADomain(t *testing.T) {
	t.Parallel()
	page, hits := webServer(t)
	other := strings.Replace(page.URL, "127.0.0.1", "localhost", 1)
	fetch := func(url string) toolCall {
		args, _ := json.Marshal(map[string]string{"url": url})
		return toolCall{name: "web_fetch", args: string(args)}
	}
	srv := inlineServer(t, toolScenario(t, "fetch_always", [][]toolCall{
		{fetch(page.URL + "/a")}, {fetch(page.URL + "/b")}, {fetch(other + "/c")},
	}, "Finished."))
	env := chatEnv(t)
	userConfig := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml")
	mustWrite(t, userConfig, "web_fetch_allow_private = true\n")
	r := startPTY(t, t.TempDir(), env, "--base-url", srv.URL, "read the pages")
	r.waitFor("[a]lways fetches from 127.0.0.1 without asking (web_fetch_allow in", 15*time.Second)
	if !strings.Contains(r.screen(), "allow? y/n/t/a ›") {
		t.Fatalf("the question does not offer always for the domain alone:\n%s", r.screen())
	}
	r.typeKeys("a\r")
	r.waitFor("[a]lways fetches from localhost without asking", 15*time.Second)
	r.typeKeys("n\r")
	r.waitFor("Finished.", 15*time.Second)
	r.expectExit(0, 10*time.Second)
	if n := strings.Count(r.screen(), "call `web_fetch`?"); n != 2 {
		t.Fatalf("asked %d times, want 2 (the second fetch from 127.0.0.1 was allowed by always):\n%s", n, r.screen())
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the server got %d requests, want 2 (the two from 127.0.0.1; localhost was declined)", n)
	}
	got, err := os.ReadFile(userConfig)
	if want := "web_fetch_allow_private = true\nweb_fetch_allow = [\"127.0.0.1\"]\n"; err != nil || string(got) != want {
		t.Errorf("your config.toml = %q (%v), want %q", got, err, want)
	}
}
