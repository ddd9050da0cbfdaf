package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// dirApprover approves every command and records each with the
// directory its approval was asked in.
type dirApprover struct {
	mu    sync.Mutex
	asked []string
}

func (d *dirApprover) ApproveCommand(ctx context.Context, command string) Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, "("+WorkdirOf(ctx)+") "+command)
	return Decision{Allowed: true}
}

func (d *dirApprover) got() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.asked...)
}

// TestRunCommandWorkdir: the command runs in the directory, given
// relative to the root or absolute inside it, in the sandbox as in the
// root, and the approver is asked with the directory beside the command,
// which is unchanged.
func TestRunCommandWorkdir(t *testing.T) {
	t.Parallel()
	ap := &dirApprover{}
	ts := gitProject(t, Options{Approver: ap})
	root := ts.Root()
	if err := os.MkdirAll(filepath.Join(root, "src", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/app", filepath.Join(root, "app-link")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(root, "src", "app")
	for _, wd := range []string{"src/app", "src/app/", "./src/../src/app", app, "app-link"} {
		if out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "pwd -P", "workdir": wd})); out != app+"\n" {
			t.Errorf("workdir %q ran in %q", wd, out)
		}
	}
	for _, wd := range []string{"", ".", root} {
		if out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "pwd -P", "workdir": wd})); out != root+"\n" {
			t.Errorf("workdir %q ran in %q", wd, out)
		}
	}
	want := []string{"(src/app) pwd -P", "(src/app) pwd -P", "(src/app) pwd -P", "(src/app) pwd -P", "(src/app) pwd -P", "() pwd -P", "() pwd -P", "() pwd -P"}
	if got := ap.got(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("asked %q", got)
	}

	// The sandbox is the project's wherever the command starts: writes
	// in the project go through, outside it, to .git's config and to
	// .ralph do not.
	mustOK(t, call(t, ts, "run_command", map[string]any{"command": "echo in > made.txt", "workdir": "src/app"}))
	if readTestFile(t, filepath.Join(app, "made.txt")) != "in\n" {
		t.Error("made.txt is not in src/app")
	}
	outside := workerstest.OutsideDir(t)
	up, err := filepath.Rel(app, outside)
	if err != nil {
		t.Fatal(err)
	}
	config := readTestFile(t, filepath.Join(root, ".git", "config"))
	for _, command := range []string{
		"echo x > " + outside + "/escape",
		"echo x > " + up + "/escape",
		"echo x >> ../../.git/config",
		"echo x > ../../.ralph/session.lock",
	} {
		res := call(t, ts, "run_command", map[string]any{"command": command, "workdir": "src/app"})
		mustErr(t, res, "[ralph: the sandbox (workspace-write) blocked this")
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); !os.IsNotExist(err) {
		t.Error("a command in src/app wrote outside the project")
	}
	if readTestFile(t, filepath.Join(root, ".git", "config")) != config || readTestFile(t, filepath.Join(root, ".ralph", "session.lock")) != "lock\n" {
		t.Error("a command in src/app changed .git/config or .ralph")
	}
}

// TestRunCommandWorkdirRefused: a directory outside the project, through
// a link out of it, in .git or .ralph, kept from the model, missing, or a
// file is refused with the file tools' sentences, before anyone is
// asked and before anything runs.
func TestRunCommandWorkdirRefused(t *testing.T) {
	t.Parallel()
	ap := &dirApprover{}
	ts := gitProject(t, Options{Approver: ap})
	root := ts.Root()
	outside := workerstest.OutsideDir(t)
	writeTestFile(t, filepath.Join(root, "f.txt"), "")
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(root, "g")); err != nil {
		t.Fatal(err)
	}
	for wd, want := range map[string]string{
		"..":         "path .. is outside the project root",
		"../other":   "path ../other is outside the project root",
		outside:      "path " + outside + " is outside the project root",
		"out":        "path out is outside the project root",
		"out/sub":    "path out/sub is outside the project root",
		"~/src":      "path ~/src starts with ~, which is not expanded",
		".git":       "cannot run a command in .git: .git and .ralph are protected (git's internals and ralph's own state), so the file tools never change anything in them",
		".git/hooks": "cannot run a command in .git/hooks: .git and .ralph are protected",
		".ralph":     "cannot run a command in .ralph: .git and .ralph are protected",
		"g":          "cannot run a command in g: .git and .ralph are protected",
		"nope":       "cannot run a command in nope: it does not exist",
		"f.txt":      "cannot run a command in f.txt: it is not a directory",
	} {
		res := call(t, ts, "run_command", map[string]any{"command": "touch ran", "workdir": wd})
		mustErr(t, res, want)
		args, _ := json.Marshal(map[string]any{"command": "touch ran", "workdir": wd})
		if ts.WillAsk(ToolRunCommand, args) {
			t.Errorf("WillAsk says a person is asked about a command in %q", wd)
		}
	}
	if got := ap.got(); len(got) != 0 {
		t.Errorf("asked about refused directories: %q", got)
	}
	for _, p := range []string{filepath.Join(outside, "ran"), filepath.Join(root, "ran"), filepath.Join(root, ".git", "ran")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: a refused command ran", p)
		}
	}

	// What the person keeps from the model is refused as the file tools
	// refuse it.
	kept := newTestToolset(t, Options{Approver: ap, Options: workers.Options{Kept: []string{filepath.Join(root, "secret")}, Root: root}})
	if err := os.Mkdir(filepath.Join(root, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, kept, "run_command", map[string]any{"command": "ls", "workdir": "secret"}), "path secret is kept from you")
}

// TestRunCommandWorkdirInTheBackgroundAndOutside: a background command
// and one outside the sandbox start in the directory too, and the note of
// the background commands names it.
func TestRunCommandWorkdirInTheBackgroundAndOutside(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	dir := filepath.Join(ts.Root(), "web")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "pwd -P; sleep 30", "workdir": "web", "background": true}))
	if !strings.Contains(readUntil(t, ts, "bg_1", res, dir+"\n"), dir+"\n") {
		t.Fatalf("background: %q", res)
	}
	if note := ts.BackgroundNote(); !strings.Contains(note, "bg_1 `pwd -P; sleep 30` in web (running for ") {
		t.Errorf("note: %q", note)
	}
	mustOK(t, call(t, ts, "stop_command", map[string]any{"id": "bg_1"}))

	out := &recordingApprover{allow: true}
	un := newTestToolset(t, Options{Approver: out, Options: workers.Options{Root: ts.Root()}})
	if got := mustOK(t, call(t, un, "run_command", map[string]any{"command": "pwd -P", "workdir": "web", "unsandboxed": true})); got != dir+"\n" {
		t.Errorf("unsandboxed: %q", got)
	}
	full := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: ts.Root(), Sandbox: sandbox.FullAccess}})
	if got := mustOK(t, call(t, full, "run_command", map[string]any{"command": "pwd -P", "workdir": "web"})); got != dir+"\n" {
		t.Errorf("danger-full-access: %q", got)
	}
}

// TestWorkspaceRefusesADirectoryOutside: the workspace checks the
// directory again where the command starts, whoever calls it.
func TestWorkspaceRefusesADirectoryOutside(t *testing.T) {
	t.Parallel()
	ts := gitProject(t, Options{Approver: allowAll})
	outside := workerstest.OutsideDir(t)
	for dir, want := range map[string]string{
		outside:                            "command was not run: its directory " + outside + " is outside the project root",
		"relative":                         "command was not run: its directory relative is outside the project root",
		filepath.Join(ts.Root(), ".git"):   "command was not run: its directory .git is in .git or .ralph",
		filepath.Join(ts.Root(), ".ralph"): "command was not run: its directory .ralph is in .git or .ralph",
		filepath.Join(ts.Root(), "x", ".."+string(filepath.Separator)+".."): "is outside the project root",
	} {
		mustErr(t, ts.ws.ExecIn(context.Background(), dir, "touch ran", ts.ws.Timeout(), true), want)
		mustErr(t, ts.ws.StartBackgroundIn(dir, "touch ran", true, ""), want)
	}
}
