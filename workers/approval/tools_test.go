package approval

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/config"
)

const toolName = "mcp__github__create_issue"

func TestApproveToolAsksShowsAndRemembers(t *testing.T) {
	p, fs := newPolicy(t, Options{})
	ctx := context.Background()
	args := json.RawMessage(`{"title": "x\u001b[2J", "body":` + "\n" + `"b"}`)
	if d := p.ApproveTool(ctx, "github", "create_issue", toolName, args); d.Allowed || !strings.Contains(d.Reason, "rerun ralph with --yes") {
		t.Fatalf("nobody to ask: %+v", d)
	}
	a := &scriptedAsker{answers: []Answer{Yes, Share}}
	p.SetAsker(a)
	if d := p.ApproveTool(ctx, "github", "create_issue", toolName, args); !d.Allowed {
		t.Fatalf("yes: %+v", d)
	}
	q := a.asked[0]
	txt := q.Text()
	for _, want := range []string{"call `create_issue` of MCP server `github`? [y]es / [n]o / [t]ell it why not / [a]lways / [p]roject always", `arguments: {"title":"x\u001b[2J","body":"b"}`,
		"[a]lways allows mcp__github__create_issue without asking (allowed_commands in your config (/home/u/.config/ralph/config.toml)), [p] in the project's .ralph/config.toml"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the question lacks %q:\n%s", want, txt)
		}
	}
	if q.What() != "call mcp__github__create_issue" || !q.CanAlways() {
		t.Errorf("What %q, CanAlways %v", q.What(), q.CanAlways())
	}
	if d := p.ApproveTool(ctx, "github", "create_issue", toolName, args); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	if d := p.ApproveTool(ctx, "github", "create_issue", toolName, args); !d.Allowed || a.questions() != 2 {
		t.Fatalf("after always it must not ask: %+v, %d questions", d, a.questions())
	}
	cfg, _ := afero.ReadFile(fs, filepath.Join(testRoot, config.ProjectFile))
	if string(cfg) != "allowed_commands = [\"mcp__github__create_issue\"]\n" {
		t.Fatalf("config = %q", cfg)
	}
	// The tool's rule never lets a program of that name run.
	if p.Allowed(toolName) {
		t.Fatal("a tool rule allowed a command")
	}
	// A later process honours it through the person's record.
	p2, _ := newPolicy(t, Options{Fs: fs, ProjectRules: []string{toolName}})
	if d := p2.ApproveTool(ctx, "github", "create_issue", toolName, args); !d.Allowed {
		t.Fatalf("remembered: %+v", d)
	}
}

func TestApproveToolYesAndAskBefore(t *testing.T) {
	ctx := context.Background()
	p, _ := newPolicy(t, Options{Yes: true, AskBefore: []string{"mcp__github__*"}})
	if d := p.ApproveTool(ctx, "files", "read", "mcp__files__read", nil); !d.Allowed {
		t.Fatalf("--yes: %+v", d)
	}
	d := p.ApproveTool(ctx, "github", "create_issue", toolName, json.RawMessage(`{}`))
	if d.Allowed || !strings.Contains(d.Reason, `ask_before "mcp__github__*"`) {
		t.Fatalf("ask_before with --yes and nobody to ask: %+v", d)
	}
	a := &scriptedAsker{answers: []Answer{Yes}}
	p.SetAsker(a)
	if d := p.ApproveTool(ctx, "github", "create_issue", toolName, json.RawMessage(`{}`)); !d.Allowed || a.questions() != 1 || a.asked[0].CanAlways() {
		t.Fatalf("ask_before asks, without always: %+v %+v", d, a.asked)
	}
	if !strings.Contains(a.asked[0].Text(), "asked every time, no [a]lways: ask_before") {
		t.Fatalf("question:\n%s", a.asked[0].Text())
	}
}

func TestApproveServerOncePerMachine(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := testRoot
	js := `{"mcpServers":{"tool":{"command":"node","args":["srv.js"]}}}`
	load := func(js string) config.MCPServer {
		_ = afero.WriteFile(fs, filepath.Join(root, config.MCPFile), []byte(js), 0o644)
		c, err := config.Load(config.Sources{Fs: fs, ProjectRoot: root, Getenv: func(string) string { return "" }})
		if err != nil || len(c.MCPServers) != 1 {
			t.Fatalf("%v %v", err, c.MCPServers)
		}
		return c.MCPServers[0]
	}
	s := load(js)
	ctx := context.Background()
	p, _ := newPolicy(t, Options{Fs: fs, Yes: true})
	if d := p.ApproveServer(ctx, s); d.Allowed || !strings.Contains(d.Reason, "ralph mcp approve tool") || !strings.Contains(d.Reason, ".mcp.json") {
		t.Fatalf("unapproved, --yes, nobody to ask: %+v", d)
	}
	a := &scriptedAsker{answers: []Answer{No, Always}}
	p.SetAsker(a)
	if d := p.ApproveServer(ctx, s); d.Allowed {
		t.Fatal("declined but allowed")
	}
	if d := p.ApproveServer(ctx, s); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	txt := a.asked[0].Text()
	if !strings.HasPrefix(txt, "start MCP server `tool` from .mcp.json: `node srv.js`? [y]es / [n]o / [t]ell it why not / [a]lways\n") {
		t.Fatalf("question:\n%s", txt)
	}
	p.SetAsker(nil)
	if d := p.ApproveServer(ctx, s); !d.Allowed {
		t.Fatalf("approved on this machine: %+v", d)
	}
	if !ServerApproved(fs, "/home/u/.config", root, s) {
		t.Fatal("not recorded")
	}
	// The repository changes the definition: the approval lapses.
	changed := load(`{"mcpServers":{"tool":{"command":"node","args":["evil.js"]}}}`)
	if d := p.ApproveServer(ctx, changed); d.Allowed {
		t.Fatal("a changed definition kept its approval")
	}
	// The record entry is no command rule.
	data, _ := afero.ReadFile(fs, TrustFile("/home/u/.config"))
	var m map[string][]string
	_ = json.Unmarshal(data, &m)
	entry := m[root][0]
	p3, _ := newPolicy(t, Options{Fs: fs, ProjectRules: []string{entry}})
	if p3.Ignored() != 1 {
		t.Fatalf("a server entry counted as a rule: %q", p3.Rules())
	}
}
