package project

import (
	"runtime"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// projectIn is a Project with only what its environment needs: its
// tools in mode and an approval policy.
func projectIn(t *testing.T, mode sandbox.Mode, noNetwork, yes bool) *Project {
	t.Helper()
	ts, err := tools.NewToolset(tools.Options{Options: workers.Options{Root: t.TempDir(), Sandbox: mode, NoNetwork: noNetwork}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return &Project{Tools: ts, Approval: approval.New(approval.Options{Yes: yes})}
}

// TestEnvironmentStatesTheSettings: the block states the sandbox mode,
// the network, the approval policy, the OS and the shell.
func TestEnvironmentStatesTheSettings(t *testing.T) {
	env := projectIn(t, sandbox.ReadOnly, true, true).environment()
	for _, want := range []string{"sandbox: read-only", "no tool that writes files (write_file, edit_file, apply_patch) is offered", "network: off",
		"approval policy: auto (--yes)", "os: " + runtime.GOOS, "shell: "} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	env = projectIn(t, sandbox.WorkspaceWrite, false, false).environment()
	for _, want := range []string{"sandbox: workspace-write", "network: on", "approval policy: ask"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
}

// TestChangedNoteSaysWhatChanged: a session continued with the settings
// its system prompt states is told nothing; one continued with other
// settings is told each that changed, and what it was.
func TestChangedNoteSaysWhatChanged(t *testing.T) {
	before := projectIn(t, sandbox.WorkspaceWrite, false, true)
	system := "You are ralph.\nThe session's settings:\n" + before.environment() + "\n\nstate files"
	if note := projectIn(t, sandbox.WorkspaceWrite, false, true).changedNote(system); note != "" {
		t.Errorf("same settings, note %q", note)
	}
	note := projectIn(t, sandbox.ReadOnly, true, true).changedNote(system)
	for _, want := range []string{"sandbox is now read-only", "(it was workspace-write", "network is now off", "<environment>"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "os is now") || strings.Contains(note, "approval policy is now") {
		t.Errorf("note names what did not change:\n%s", note)
	}
	if note := before.changedNote("a prompt from before ralph stated its settings"); note != "" {
		t.Errorf("an old prompt, note %q", note)
	}
}
