package approval

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

func TestParseToolRules(t *testing.T) {
	r, err := ParseToolRules([]string{"Bash(go test:*),Read Edit", "mcp__gh__issue"}, []string{"Bash(git push:*) Write(secrets/*)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.AllowWords) != 1 || !slices.Equal(r.AllowWords[0].Words, []string{"go", "test"}) || !slices.Contains(r.Allow, "mcp__gh__issue") || r.AllowCommands {
		t.Fatalf("allow = %+v", r)
	}
	if !slices.Equal(r.Deny, []string{"git push"}) || !slices.Equal(r.DenyWrites[tools.ToolWriteFile], []string{"secrets/*"}) {
		t.Fatalf("deny = %+v", r)
	}
	if _, err := ParseToolRules([]string{"Frobnicate"}, nil); err == nil {
		t.Fatal("an unknown tool was accepted")
	}
	if _, err := ParseToolRules(nil, []string{"Read"}); err == nil {
		t.Fatal("a refusal ralph cannot honour was accepted")
	}
}

func TestToolRulesDecide(t *testing.T) {
	r, err := ParseToolRules([]string{"Bash(go test:*)"}, []string{"Bash(git push:*)", "Edit"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
	ctx := context.Background()
	for cmd, want := range map[string]bool{"go test ./...": true, "git push origin main": false, "ls": false, "go test ./... && git push": false} {
		if d := p.ApproveCommand(ctx, cmd); d.Allowed != want {
			t.Errorf("%q: allowed %v, want %v (%s)", cmd, d.Allowed, want, d.Reason)
		}
	}
	if d := p.ApproveWrite(ctx, tools.ToolEditFile, "a.go"); d.Allowed {
		t.Error("edit_file was allowed under --disallowed-tools Edit")
	}
	if d := p.ApproveWrite(ctx, tools.ToolWriteFile, "a.go"); !d.Allowed {
		t.Errorf("write_file was refused: %s", d.Reason)
	}
}

// MCP tools are allowed and refused by name, by server pattern
// ("mcp__gh__*") and by Claude Code's server-wide form ("mcp__gh").
func TestToolRulesMCPServers(t *testing.T) {
	r, err := ParseToolRules([]string{"mcp__gh", "mcp__db__query"}, []string{"mcp__fs__*"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
	ctx := context.Background()
	for name, want := range map[string]bool{
		"mcp__gh__create_issue": true, "mcp__gh__list": true, "mcp__db__query": true,
		"mcp__db__drop": false, "mcp__ghost__x": false, "mcp__fs__write": false,
	} {
		server, tool, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		if d := p.ApproveTool(ctx, server, tool, name, nil); d.Allowed != want {
			t.Errorf("%s: allowed %v, want %v (%s)", name, d.Allowed, want, d.Reason)
		}
	}
}

// A patch writes and edits files, so the person's Edit(…) and Write(…)
// refusals hold for apply_patch too: the model choosing the patch tool
// must not pass a rule given for the other two.
func TestWriteRulesHoldForAPatch(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{"Edit(secrets/**)", "Write(secrets/**)"} {
		r, err := ParseToolRules(nil, []string{rule})
		if err != nil {
			t.Fatal(err)
		}
		p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
		ctx := context.Background()
		if d := p.ApproveWrite(ctx, tools.ToolApplyPatch, "main.go", "secrets/key.txt"); d.Allowed {
			t.Errorf("%s: a patch touching secrets/key.txt was allowed", rule)
		}
		if d := p.ApproveWrite(ctx, tools.ToolApplyPatch, "main.go"); !d.Allowed {
			t.Errorf("%s: a patch of main.go alone was refused: %s", rule, d.Reason)
		}
	}
}

// TestWholeToolDenyIsNamedAsWritten: a rule for all of a tool is named in
// the refusal as the person wrote it (Write, Bash), not as ralph's "*".
func TestWholeToolDenyIsNamedAsWritten(t *testing.T) {
	t.Parallel()
	r, err := ParseToolRules(nil, []string{"Write", "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
	ctx := context.Background()
	if d := p.ApproveWrite(ctx, tools.ToolWriteFile, "a.txt"); d.Allowed || !strings.Contains(d.Reason, `--disallowed-tools "Write" refuses`) {
		t.Errorf("write_file: %+v", d)
	}
	if d := p.ApproveCommand(ctx, "ls"); d.Allowed || !strings.Contains(d.Reason, `--disallowed-tools "Bash" refuses`) {
		t.Errorf("run_command: %+v", d)
	}
}
