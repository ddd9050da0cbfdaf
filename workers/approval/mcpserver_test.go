package approval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
)

// loadServer writes the project's .mcp.json and loads its one server.
func loadServer(t *testing.T, fs afero.Fs, js string) config.MCPServer {
	t.Helper()
	_ = afero.WriteFile(fs, filepath.Join(testRoot, config.MCPFile), []byte(js), 0o644)
	c, err := config.Load(config.Sources{Fs: fs, ProjectRoot: testRoot, Getenv: func(string) string { return "" }})
	if err != nil || len(c.MCPServers) != 1 {
		t.Fatalf("%v %v", err, c.MCPServers)
	}
	return c.MCPServers[0]
}

// TestServerApprovalShowsTheEnvironment: a server whose .mcp.json changes
// only its env is asked about again, and the question and the refusal
// show the new variable and its value, old → new; values that look like
// secrets, and known secrets anywhere, are hidden, and nothing secret is
// kept in the record of what was approved.
func TestServerApprovalShowsTheEnvironment(t *testing.T) {
	const apiKey = "sk-test-0123456789abcdef"
	fs := afero.NewMemMapFs()
	secrets := memory.NewRedactor(apiKey)
	before := loadServer(t, fs, `{"mcpServers":{"tool":{"command":"node","args":["srv.js","--key=`+apiKey+`"],"env":{"LOG":"info","GH_TOKEN":"${GH_TOKEN}"}}}}`)
	p, _ := newPolicy(t, Options{Fs: fs, Redactor: secrets})
	a := &scriptedAsker{answers: []Answer{Always, No}}
	p.SetAsker(a)
	ctx := context.Background()
	if d := p.ApproveServer(ctx, before); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	first := a.asked[0].Text()
	for _, want := range []string{
		"start MCP server `tool` from .mcp.json: `node srv.js --key=[REDACTED]`? [y]es / [n]o / [t]ell it why not / [a]lways\n",
		"  as .mcp.json defines it:\n    command: node\n    args: srv.js --key=[REDACTED]\n    env GH_TOKEN: ${GH_TOKEN}\n    env LOG: info\n    cwd: (the project root)\n",
	} {
		if !strings.Contains(first, want) {
			t.Fatalf("the first question lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "changed") || strings.Contains(first, apiKey) {
		t.Fatalf("the first question:\n%s", first)
	}

	// Only the environment changes: a preload and a literal token.
	after := loadServer(t, fs, `{"mcpServers":{"tool":{"command":"node","args":["srv.js","--key=`+apiKey+`"],"env":{"LOG":"debug","GH_TOKEN":"ghp_literal0123456789","NODE_OPTIONS":"--require ./.hidden/x.js"}}}}`)
	if after.Fingerprint() == before.Fingerprint() {
		t.Fatal("an env change kept the fingerprint")
	}
	if d := p.ApproveServer(ctx, after); d.Allowed {
		t.Fatal("a definition whose env changed kept its approval")
	}
	q := a.asked[1].Text()
	wantChanges := "  it changed since you approved it on this machine:\n" +
		"    env GH_TOKEN: ${GH_TOKEN} → [hidden]\n" +
		"    env LOG: info → debug\n" +
		"    env NODE_OPTIONS: (not set) → \"--require ./.hidden/x.js\"\n"
	if !strings.Contains(q, wantChanges) || !strings.Contains(q, "    env NODE_OPTIONS: \"--require ./.hidden/x.js\"\n") {
		t.Fatalf("the question after the change:\n%s", q)
	}
	if strings.Contains(q, "ghp_literal") || strings.Contains(q, apiKey) {
		t.Fatalf("the question shows a secret:\n%s", q)
	}
	// Nobody to ask: the refusal says what changed.
	p.SetAsker(nil)
	d := p.ApproveServer(ctx, after)
	if d.Allowed || !strings.Contains(d.Reason, `MCP server "tool" is defined by the project's .mcp.json and was not approved on this machine as it is now: `+
		`it changed since you approved it: env GH_TOKEN: ${GH_TOKEN} → [hidden]; env LOG: info → debug; env NODE_OPTIONS: (not set) → "--require ./.hidden/x.js"; `+
		"approve it again with `ralph mcp approve tool`") {
		t.Fatalf("refusal: %+v", d)
	}
	for _, f := range []string{TrustFile("/home/u/.config"), ApprovedServersFile("/home/u/.config")} {
		data, err := afero.ReadFile(fs, f)
		if err != nil || strings.Contains(string(data), apiKey) || strings.Contains(string(data), "ghp_literal") {
			t.Fatalf("%s (%v):\n%s", f, err, data)
		}
	}

	// Only the hidden value changes: it is named, not shown.
	if err := TrustServer(fs, "/home/u/.config", testRoot, after, secrets); err != nil {
		t.Fatal(err)
	}
	again := loadServer(t, fs, `{"mcpServers":{"tool":{"command":"node","args":["srv.js","--key=`+apiKey+`"],"env":{"LOG":"debug","GH_TOKEN":"ghp_other0123456789","NODE_OPTIONS":"--require ./.hidden/x.js"}}}}`)
	r := ReviewServer(fs, "/home/u/.config", testRoot, again, secrets)
	if r.Approved || !r.Earlier || strings.Join(r.Changes, "\n") != "env GH_TOKEN: [hidden], changed" {
		t.Fatalf("review of a hidden change: %+v", r)
	}
}

// TestServerApprovedByAnOlderRalph: an approval recorded before ralph kept
// what was approved still holds for the same definition, and a changed
// one says it changed and shows all of itself.
func TestServerApprovedByAnOlderRalph(t *testing.T) {
	fs := afero.NewMemMapFs()
	s := loadServer(t, fs, `{"mcpServers":{"tool":{"command":"node","args":["srv.js"]}}}`)
	// What an older ralph wrote: the fingerprint entry only.
	if err := trustRule(fs, "/home/u/.config", testRoot, serverEntry(s)); err != nil {
		t.Fatal(err)
	}
	p, _ := newPolicy(t, Options{Fs: fs})
	if d := p.ApproveServer(context.Background(), s); !d.Allowed {
		t.Fatalf("the older approval lapsed: %+v", d)
	}
	changed := loadServer(t, fs, `{"mcpServers":{"tool":{"command":"node","args":["srv.js"],"env":{"NODE_OPTIONS":"--require x.js"}}}}`)
	d := p.ApproveServer(context.Background(), changed)
	if d.Allowed || !strings.Contains(d.Reason, `it changed since you approved it (ralph kept no copy of what you approved then); it is now command: node; args: srv.js; env NODE_OPTIONS: "--require x.js"; cwd: (the project root)`) {
		t.Fatalf("refusal: %+v", d)
	}
}

// TestShowDefinitionOfHTTPServers: a URL, its headers' names (their values
// hidden unless they only name variables) and the variables headers_env
// reads are shown; roots when the table sets them.
func TestShowDefinitionOfHTTPServers(t *testing.T) {
	d := config.MCPDefinition{Transport: config.TransportHTTP, URL: "https://mcp.example/mcp",
		Headers: map[string]string{"Authorization": "Bearer tok-literal", "X-Key": "${X_KEY}"}, HeadersEnv: map[string]string{"X-Other": "OTHER"},
		Roots: []string{"docs", "/srv/a b"}}
	var lines []string
	for _, f := range showDefinition(d, nil) {
		lines = append(lines, f.line())
	}
	want := "transport: http\nurl: https://mcp.example/mcp\nheader Authorization: [hidden]\nheader X-Key: ${X_KEY}\nheader X-Other: from $OTHER\nroots: docs \"/srv/a b\""
	if got := strings.Join(lines, "\n"); got != want {
		t.Fatalf("shown:\n%s\nwant:\n%s", got, want)
	}
	if got := diffFields(showDefinition(d, nil), showDefinition(config.MCPDefinition{Transport: config.TransportHTTP, URL: "https://mcp.example/mcp"}, nil)); strings.Join(got, "\n") !=
		"header Authorization: [hidden] → (not set)\nheader X-Key: ${X_KEY} → (not set)\nheader X-Other: from $OTHER → (not set)\nroots: docs \"/srv/a b\" → (not set)" {
		t.Fatalf("diff:\n%s", strings.Join(got, "\n"))
	}
}
