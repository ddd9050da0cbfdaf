package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// echoTool is a registered tool that says where it was made.
type echoTool string

func (e echoTool) Def() ToolDef {
	return ToolDef{Name: "echo", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (e echoTool) Run(context.Context, json.RawMessage) workers.Result {
	return workers.Result{Output: string(e)}
}

func TestRootedToolsetWorksInItsDirectoryOnly(t *testing.T) {
	project := t.TempDir()
	tree := filepath.Join(project, ".ralph", "worktrees", "t1")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: project, Sandbox: sandbox.FullAccess}})
	ts.Register(echoTool("from the project"))
	rt, err := ts.Rooted(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// Files are written in the tree, although it lies under .ralph of the
	// project: the protection is relative to the tools' own root.
	mustOK(t, call(t, rt, "write_file", map[string]string{"path": "a.txt", "content": "x\n"}))
	if readTestFile(t, filepath.Join(tree, "a.txt")) != "x\n" {
		t.Fatal("a.txt is not in the tree")
	}
	if _, err := os.Stat(filepath.Join(project, "a.txt")); !os.IsNotExist(err) {
		t.Fatal("a.txt reached the project")
	}
	mustErr(t, call(t, rt, "write_file", map[string]string{"path": "../../../b.txt", "content": "x"}), "outside the project root")
	mustErr(t, call(t, rt, "write_file", map[string]string{"path": ".ralph/x", "content": "x"}), "protected")
	if out := mustOK(t, call(t, rt, "run_command", map[string]string{"command": "pwd"})); strings.TrimSpace(out) != rt.Root() {
		t.Fatalf("commands run in %q, want %q", out, rt.Root())
	}
	if r := rt.Workspace().RunVerify(context.Background(), "ls a.txt", 0, false); r.IsError {
		t.Fatalf("RunVerify: %s", r.Output)
	}
	// Registered tools come along as they are.
	if out := mustOK(t, call(t, rt, "echo", nil)); out != "from the project" {
		t.Fatalf("echo = %q", out)
	}
	if len(rt.Definitions()) != len(ts.Definitions()) {
		t.Fatalf("definitions %d, want %d", len(rt.Definitions()), len(ts.Definitions()))
	}
}

func TestRootedToolsetIsSandboxedToItsDirectory(t *testing.T) {
	// The project lies outside the temporary directory, which the sandbox
	// leaves writable.
	project := workerstest.OutsideDir(t)
	tree := filepath.Join(project, ".ralph", "worktrees", "t1")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: project}})
	rt, err := ts.Rooted(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mustOK(t, call(t, rt, "run_command", map[string]string{"command": "echo y > a.txt"}))
	if readTestFile(t, filepath.Join(tree, "a.txt")) != "y\n" {
		t.Fatal("the command did not write in its tree")
	}
	mustErr(t, call(t, rt, "run_command", map[string]string{"command": "echo x > " + filepath.Join(project, "escape")}), "the sandbox (workspace-write) blocked this")
	if _, err := os.Stat(filepath.Join(project, "escape")); !os.IsNotExist(err) {
		t.Fatal("a command of the tree wrote into the project")
	}
}
