package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// searchResponse is a stand-in answer that searches with the Messages
// API's own web_search tool when the request offers it (llmtest.WebSearch)
// and then answers citing the first result.
const searchResponse = `{"text":"The latest release is Go 1.25.","web_search":{"query":"latest Go release","results":[` +
	`{"title":"Go 1.25 Release Notes","url":"https://go.dev/doc/go1.25"},{"title":"Release History","url":"https://go.dev/doc/devel/release"}]}}`

// offersSearch reports whether a sent Messages request offered the
// server tool, and fails the test on one that offered it twice or under
// another shape.
func offersSearch(t *testing.T, req sentRequest) bool {
	t.Helper()
	n := 0
	for _, raw := range req.Tools {
		var tool struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			MaxUses int    `json:"max_uses"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.Type == "" {
			continue
		}
		if tool.Type != "web_search_20250305" || tool.Name != "web_search" || tool.MaxUses < 1 {
			t.Fatalf("server tool %s", raw)
		}
		n++
	}
	if n > 1 {
		t.Fatalf("web_search offered %d times", n)
	}
	return n == 1
}

// searchEvents are the web_search lines of a stream-json output.
func searchEvents(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range streamLines(t, stdout) {
		if l["type"] == "web_search" {
			out = append(out, l)
		}
	}
	return out
}

// withUserConfig is cleanEnv's environment with config as the person's
// own config file.
func withUserConfig(t *testing.T, env []string, config string) []string {
	t.Helper()
	mustWrite(t, filepath.Join(envValue(env, "HOME"), ".config", "ralph", "config.toml"), config)
	return env
}

// TestWebSearchOffByDefault: without web_search in the config or
// --web-search, the request offers no search tool, the stand-in does not
// search, and nothing is said about it.
func TestWebSearchOffByDefault(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, searchResponse)
	r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "stream-json", "what is the latest Go release?")
	sent := messagesSent(t, srv, false)
	if len(sent) != 1 || offersSearch(t, sent[0]) {
		t.Fatalf("requests %+v offer web_search", sent)
	}
	if ev := searchEvents(t, r.stdout); len(ev) != 0 || strings.Contains(r.stderr, "web_search") {
		t.Fatalf("a search was shown or spoken of: %v\n%s", ev, r.stderr)
	}
}

// TestWebSearchAnthropicServerTool: web_search = true in the person's
// config offers Anthropic's server tool; the search the API ran is one
// web_search event with its query and result count, never a tool call
// ralph runs; the cited answer reaches the person; the search is counted
// in the usage; and the next turn's request is one the API takes (the
// stand-in checks it), carrying the turn back as its text, without the
// search's blocks.
func TestWebSearchAnthropicServerTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := withUserConfig(t, anthropicEnv(t), "web_search = true\n")
	srv := anthropicServer(t, searchResponse+`,{"text":"Go 1.25 came out in August.","web_search":{"query":"go 1.25 \u001b[2Jrelease date","results":[{"title":"Go 1.25","url":"https://go.dev/blog/go1.25"}]}}`)
	r := anthropicRun(t, dir, env, srv, "--output-format", "stream-json", "what is the latest Go release?")
	ev := searchEvents(t, r.stdout)
	if len(ev) != 1 {
		t.Fatalf("%d web_search events, want 1\n%s", len(ev), r.stdout)
	}
	search, _ := ev[0]["search"].(map[string]any)
	if search["query"] != "latest Go release" || search["results"] != float64(2) {
		t.Fatalf("web_search event %v", ev[0])
	}
	for _, l := range streamLines(t, r.stdout) {
		if l["type"] == "tool_call" {
			t.Fatalf("the server's search was run as a tool call: %v", l)
		}
	}
	res := resultLine(t, r.stdout)
	if res["result"] != "The latest release is Go 1.25." {
		t.Fatalf("result %v", res["result"])
	}
	if u, _ := res["usage"].(map[string]any); u["web_searches"] != float64(1) {
		t.Fatalf("usage %v", res["usage"])
	}

	// The second turn searches too, in the one-shot's text face with -v:
	// the search is one line on stderr, its query without the control
	// sequence the model put in it, and the answer is on stdout.
	r = anthropicRun(t, dir, env, srv, "-c", "-v", "when did it come out?")
	if !strings.Contains(r.stdout, "Go 1.25 came out in August.") {
		t.Fatalf("second answer not shown:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `web_search "go 1.25 release date" · 1 result`) || strings.Contains(r.stderr, "\x1b[2J") {
		t.Fatalf("the search's line is missing or carries the control sequence:\n%q", r.stderr)
	}
	sent := messagesSent(t, srv, false)
	if len(sent) != 2 || !offersSearch(t, sent[0]) || !offersSearch(t, sent[1]) {
		t.Fatalf("requests %+v", sent)
	}
	raw, _ := json.Marshal(sent[1].Messages)
	for _, gone := range []string{"server_tool_use", "web_search_tool_result", "encrypted_", "citations"} {
		if strings.Contains(string(raw), gone) {
			t.Fatalf("the second request carries %s back: %s", gone, raw)
		}
	}
	var kept bool
	for _, m := range sent[1].Messages {
		msg := message(t, m)
		kept = kept || msg.Role == "assistant" && len(msg.Content) == 1 && msg.Content[0].Text == "The latest release is Go 1.25."
	}
	if !kept {
		t.Fatalf("the first answer is not in the second request as its text: %s", raw)
	}
}

// TestWebSearchOpenAIOnlySearchModels: --web-search sends
// web_search_options to an OpenAI search model; another OpenAI model gets
// no such field, and the session says in one sentence that web_search is
// not offered.
func TestWebSearchOpenAIOnlySearchModels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model   string
		offered bool
	}{{"gpt-4o-search-preview", true}, {"gpt-4o", false}} {
		srv := inlineServer(t, `{"name":"search","responses":[{"text":"Go 1.25 is the latest."}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--model", c.model, "--web-search", "--output-format", "json", "latest Go?")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c.model, r.code, r.stdout, r.stderr)
		}
		if got := resultLine(t, r.stdout)["result"]; got != "Go 1.25 is the latest." {
			t.Fatalf("%s: result %v", c.model, got)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", c.model, len(reqs))
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		opts, sent := body["web_search_options"]
		if sent != c.offered || sent && string(opts) != "{}" {
			t.Fatalf("%s: web_search_options %q sent %v, want %v", c.model, opts, sent, c.offered)
		}
		said := strings.Count(r.stderr, "web_search is not offered")
		if c.offered && said != 0 || !c.offered && said != 1 {
			t.Fatalf("%s: stderr says it %d times:\n%s", c.model, said, r.stderr)
		}
	}
}

// TestWebSearchRefusedWithoutNetwork: with the switch on and
// --no-network, the request offers no search and the session says why in
// one sentence.
func TestWebSearchRefusedWithoutNetwork(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, searchResponse)
	r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--web-search", "--no-network", "--output-format", "stream-json", "latest Go?")
	sent := messagesSent(t, srv, false)
	if len(sent) != 1 || offersSearch(t, sent[0]) {
		t.Fatalf("requests %+v offer web_search", sent)
	}
	if ev := searchEvents(t, r.stdout); len(ev) != 0 {
		t.Fatalf("searched without the network: %v", ev)
	}
	if n := strings.Count(r.stderr, "web_search is not offered: the session has no network"); n != 1 {
		t.Fatalf("said %d times, want once:\n%s", n, r.stderr)
	}
}
