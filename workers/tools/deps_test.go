package tools

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestRolesFilterTheList keeps who is offered what: the coordinator keeps
// the task list and starts agents, a child does neither, the task loop's
// worker claims its task, a reviewer only reads and reports, a fixer
// fixes and says so.
func TestRolesFilterTheList(t *testing.T) {
	open := Mode{Sandbox: sandbox.WorkspaceWrite, Network: true}
	cases := []struct {
		role     Role
		has, not []string
	}{
		{RoleMain, []string{ToolWriteFile, ToolRunCommand, ToolCompleteTask, ToolSpawnAgent, ToolWritePlan, ToolAskUser}, []string{ToolReportFindings, ToolFixesDone}},
		{RoleChild, []string{ToolWriteFile, ToolRunCommand, ToolRemember, ToolRecordDecision}, []string{ToolCompleteTask, ToolSpawnAgent, ToolWritePlan, ToolReportFindings}},
		{RoleWorker, []string{ToolWriteFile, ToolRunCommand, ToolCompleteTask}, []string{ToolSpawnAgent, ToolJudgeFindings}},
		{RoleReviewer, []string{ToolReadFile, ToolSearch, ToolListFiles, ToolReportFindings, ToolJudgeFindings}, []string{ToolWriteFile, ToolEditFile, ToolRunCommand, ToolRemember, "mcp__x__y", ToolFixesDone}},
		{RoleFixer, []string{ToolEditFile, ToolRunCommand, ToolFixesDone, "mcp__x__y"}, []string{ToolCompleteTask, ToolReportFindings}},
	}
	for _, c := range cases {
		for _, name := range c.has {
			if !Offered(name, c.role, open) {
				t.Errorf("role %d is not offered %s", c.role, name)
			}
		}
		for _, name := range c.not {
			if Offered(name, c.role, open) {
				t.Errorf("role %d is offered %s", c.role, name)
			}
		}
	}
}

// TestModeFiltersTheList: read-only offers no tool that writes from
// ralph's process but ralph's records; no network offers no tool that
// reaches it; workspace-write offers everything.
func TestModeFiltersTheList(t *testing.T) {
	ro := Mode{Sandbox: sandbox.ReadOnly, Network: true}
	for _, name := range []string{ToolWriteFile, ToolEditFile} {
		if Offered(name, RoleMain, ro) || Offered(name, RoleWorker, ro) {
			t.Errorf("read-only offers %s", name)
		}
	}
	for _, name := range []string{ToolCompleteTask, ToolRecordDecision, ToolRemember, ToolWritePlan, ToolReadFile, ToolRunCommand} {
		if !Offered(name, RoleMain, ro) {
			t.Errorf("read-only does not offer %s", name)
		}
	}
	if !Offered(ToolCompleteTask, RoleWorker, ro) {
		t.Error("read-only does not offer the task loop's complete_task: a read-only run could not finish a task")
	}
	off := Mode{Sandbox: sandbox.WorkspaceWrite}
	if off.Allows(ToolInfo{Network: true}) || !off.Allows(ToolInfo{}) || !(Mode{Network: true}).Allows(ToolInfo{Network: true}) {
		t.Error("the network filter is wrong")
	}
	for _, row := range tools {
		if row.info.Network && Offered(row.name, AllRoles, off) {
			t.Errorf("%s reaches the network but is offered with --no-network", row.name)
		}
		if row.roles == 0 || row.build == nil {
			t.Errorf("%s has no roles or no constructor", row.key)
		}
	}
}

// TestToolsetOffersWhatItsModeAllows: a read-only Toolset's definitions,
// and a worker's view of it, leave out write_file and edit_file and keep
// complete_task; a call of a tool the mode leaves out is refused.
func TestToolsetOffersWhatItsModeAllows(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.ReadOnly, NoNetwork: true}})
	ts.Add(Deps{Fs: afero.NewMemMapFs(), Root: "/p", Redact: memory.NewRedactor(), Decide: func(memory.DecisionRecord) error { return nil }})
	claim := Build(Deps{Claim: func(context.Context, json.RawMessage) workers.Result { return workers.Result{Output: "claimed"} }})
	names := func(defs []ToolDef) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	for what, got := range map[string][]string{"toolset": names(ts.Definitions()), "worker": names(ts.For(RoleWorker, claim...).Definitions())} {
		if slices.Contains(got, ToolWriteFile) || slices.Contains(got, ToolEditFile) || !slices.Contains(got, ToolCompleteTask) || !slices.Contains(got, ToolRecordDecision) {
			t.Errorf("%s in read-only offers %v", what, got)
		}
	}
	if r := ts.For(RoleWorker, claim...).Call(context.Background(), ToolCompleteTask, json.RawMessage(`{}`)); r.Output != "claimed" {
		t.Errorf("complete_task in read-only: %+v", r)
	}
	if r := ts.Call(context.Background(), ToolWriteFile, json.RawMessage(`{"path":"a","content":"x"}`)); !r.IsError {
		t.Errorf("write_file in read-only: %+v", r)
	}
	if ts.Mode() != (Mode{Sandbox: sandbox.ReadOnly}) {
		t.Errorf("mode %+v", ts.Mode())
	}
}

// TestPeerNames: Claude Code's names and input shapes map to
// ralph's tools, as rules, hooks and agent definitions need.
func TestPeerNames(t *testing.T) {
	for claude, ours := range map[string]string{"Bash": ToolRunCommand, "bash": ToolRunCommand, "Write": ToolWriteFile, "Edit": ToolEditFile,
		"MultiEdit": ToolEditFile, "Read": ToolReadFile, "Grep": ToolSearch, "Glob": ToolListFiles, "LS": ToolListFiles,
		"run_command": ToolRunCommand, "WebFetch": ToolWebFetch, "WebSearch": ToolWebSearch, "web_search": ToolWebSearch, "NotebookRead": ToolReadFile, "SlashCommand": ""} {
		if got := ByPeerName(claude); got != ours {
			t.Errorf("ByPeerName(%s) = %q, want %q", claude, got, ours)
		}
	}
	in, ok := PeerInput(ToolEditFile, json.RawMessage(`{"path":"a.go","old_string":"x","new_string":"y"}`))
	if !ok || string(in["file_path"]) != `"a.go"` || string(in["old_string"]) != `"x"` || string(in["new_string"]) != `"y"` || len(in) != 3 {
		t.Errorf("Edit input %v %v", in, ok)
	}
	// Claude Code's Bash takes its timeout in milliseconds.
	in, ok = PeerInput(ToolRunCommand, json.RawMessage(`{"command":"ls","timeout_s":3}`))
	if !ok || string(in["command"]) != `"ls"` || string(in["timeout"]) != "3000" || len(in) != 2 {
		t.Errorf("Bash input %v %v", in, ok)
	}
	if _, ok := PeerInput(ToolRemember, json.RawMessage(`{}`)); ok {
		t.Error("remember has no Claude Code shape")
	}
	for _, name := range []string{ToolRunCommand, ToolWriteFile, ToolEditFile, ToolReadFile, ToolSearch, ToolListFiles} {
		c := Peer(name)
		for theirs, ours := range c.Input {
			if _, ok := paramsOf(name)[ours]; !ok {
				t.Errorf("%s maps %s to %s, which is not its argument", name, theirs, ours)
			}
		}
	}
}

// paramsOf are the argument names of tool name's schema.
func paramsOf(name string) map[string]any {
	for _, row := range tools {
		if row.name == name {
			var s struct{ Properties map[string]any }
			_ = json.Unmarshal(Schema(row.params), &s)
			return s.Properties
		}
	}
	return nil
}
