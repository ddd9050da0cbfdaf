package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// gitProject is a toolset whose root holds a git repository and ralph's
// state, as a real project does.
func gitProject(t testing.TB, opts Options) *Toolset {
	t.Helper()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	writeTestFile(t, filepath.Join(root, ".ralph", "session.lock"), "lock\n")
	opts.Root = root
	return newTestToolset(t, opts)
}

func TestRunCommandSandboxRefusesAndSaysSo(t *testing.T) {
	t.Parallel()
	ts := gitProject(t, Options{Approver: allowAll})
	outside := workerstest.OutsideDir(t)
	home, _ := os.UserHomeDir()
	probe := filepath.Join(home, ".ralph-sandbox-probe")
	config := readTestFile(t, filepath.Join(ts.Root(), ".git", "config"))
	attempts := map[string]string{
		"echo x > " + outside + "/escape":          filepath.Join(outside, "escape"),
		"echo '#!/bin/sh' > .git/hooks/pre-commit": filepath.Join(ts.Root(), ".git", "hooks", "pre-commit"),
		"git config core.fsmonitor 'touch pwned'":  "",
		"echo x > .ralph/session.lock":             "",
		"cp /etc/hostname " + outside + "/copied":  filepath.Join(outside, "copied"),
	}
	if home != "" && !strings.HasPrefix(home, os.TempDir()) && !strings.HasPrefix(home, ts.Root()) {
		attempts["echo x > "+probe] = probe
		t.Cleanup(func() { os.Remove(probe) })
	}
	for command, path := range attempts {
		res := call(t, ts, "run_command", map[string]any{"command": command})
		mustErr(t, res, "[ralph: the sandbox (workspace-write) blocked this: writes outside the project and the temporary directory, and to .git/hooks, .git/config and .ralph/, are not allowed")
		mustErr(t, res, `"unsandboxed": true`)
		if path != "" {
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%q wrote %s", command, path)
			}
		}
	}
	if got := readTestFile(t, filepath.Join(ts.Root(), ".git", "config")); got != config {
		t.Errorf(".git/config changed:\n%s", got)
	}
	if got := readTestFile(t, filepath.Join(ts.Root(), ".ralph", "session.lock")); got != "lock\n" {
		t.Errorf(".ralph/session.lock = %q", got)
	}
	out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "echo in > inside.txt && echo t > " + os.TempDir() + "/ralph-ws-" + filepath.Base(ts.Root()) + " && cat /etc/hostname >/dev/null && echo ok"}))
	os.Remove(os.TempDir() + "/ralph-ws-" + filepath.Base(ts.Root()))
	if out != "ok\n" {
		t.Fatalf("writes in the project and temp, reads anywhere: %q", out)
	}
	if def := ts.Definitions()[6]; !strings.Contains(def.Description, "Commands run in a sandbox (workspace-write)") || !strings.Contains(string(def.Parameters), `"unsandboxed"`) {
		t.Errorf("run_command does not tell the model about the sandbox: %s", def.Description)
	}
}

func TestRunCommandReadOnlyAndFullAccess(t *testing.T) {
	t.Parallel()
	ro := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.ReadOnly}})
	mustErr(t, call(t, ro, "run_command", map[string]any{"command": "echo x > f"}), "the sandbox (read-only) blocked this: no writes are allowed")
	if out := mustOK(t, call(t, ro, "run_command", map[string]any{"command": "cat /etc/hostname > /dev/null; echo ok"})); out != "ok\n" {
		t.Fatalf("read-only reads: %q", out)
	}
	outside := workerstest.OutsideDir(t)
	full := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.FullAccess}})
	mustOK(t, call(t, full, "run_command", map[string]any{"command": "echo x > " + outside + "/full"}))
	if strings.Contains(full.Definitions()[5].Description, "sandbox") {
		t.Error("danger-full-access still describes a sandbox")
	}
}

// recordingApprover approves or refuses everything and records what it
// was asked.
type recordingApprover struct {
	allow bool
	mu    sync.Mutex
	asked []string
}

func (r *recordingApprover) ApproveCommand(_ context.Context, cmd string) Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, cmd)
	if r.allow {
		return Decision{Allowed: true}
	}
	return Decision{Reason: "the user declined to run this command"}
}

func TestRunCommandUnsandboxed(t *testing.T) {
	t.Parallel()
	outside := workerstest.OutsideDir(t)
	command := "echo x > " + outside + "/granted"
	args := map[string]any{"command": command, "unsandboxed": true}

	// --yes approves commands, never a way out of the sandbox.
	yes := newTestToolset(t, Options{Approver: allowAll, AutoApprove: true})
	mustErr(t, call(t, yes, "run_command", args), "it asked to run outside the sandbox, which --yes never approves; run it inside the sandbox, or the user can rerun ralph with --sandbox danger-full-access")

	no := &recordingApprover{}
	ts := newTestToolset(t, Options{Approver: no})
	mustErr(t, call(t, ts, "run_command", args), "command was not run outside the sandbox: the user declined")
	if len(no.asked) != 1 || no.asked[0] != UnsandboxedPrefix+command {
		t.Fatalf("asked %q", no.asked)
	}
	if _, err := os.Stat(filepath.Join(outside, "granted")); !os.IsNotExist(err) {
		t.Fatal("a refused unsandboxed command ran")
	}

	ok := &recordingApprover{allow: true}
	ts = newTestToolset(t, Options{Approver: ok})
	mustOK(t, call(t, ts, "run_command", args))
	if readTestFile(t, filepath.Join(outside, "granted")) != "x\n" {
		t.Fatal("the approved unsandboxed command did not run outside the sandbox")
	}
}

func TestRunCommandSandboxUnavailable(t *testing.T) {
	t.Parallel()
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: root}})
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "touch ran"}),
		"[ralph: the command did not run: the sandbox is not available: .git is a symbolic link, which a command could replace, so the sandbox cannot keep it read-only. Commands run only inside the sandbox: to run them without it, the user can rerun ralph with --sandbox danger-full-access]")
	if _, err := os.Stat(filepath.Join(root, "ran")); !os.IsNotExist(err) {
		t.Fatal("the command ran without the sandbox")
	}
}

// BenchmarkSandboxedTrue measures what the sandbox adds to a command:
// run_command of `true` unsandboxed and in each sandbox mode, the modes
// taking turns within every iteration so that a noisy machine slows them
// alike. It reports each mode's median, the median overhead of the
// default mode over no sandbox (the target: under 5 ms), and the first
// sandboxed command, which also starts the session's helper.
func BenchmarkSandboxedTrue(b *testing.B) {
	modes := []struct {
		name string
		opts Options
	}{
		{"unsandboxed", Options{Options: workers.Options{Sandbox: sandbox.FullAccess}}},
		{"read-only", Options{Options: workers.Options{Sandbox: sandbox.ReadOnly}}},
		{"workspace-write", Options{Options: workers.Options{Sandbox: sandbox.WorkspaceWrite}}},
		{"workspace-write-no-network", Options{Options: workers.Options{Sandbox: sandbox.WorkspaceWrite, NoNetwork: true}}},
	}
	args := json.RawMessage(`{"command": "true"}`)
	ctx := context.Background()
	sets := make([]*Toolset, len(modes))
	ds := make([][]time.Duration, len(modes))
	var first time.Duration
	for i, m := range modes {
		m.opts.Approver = allowAll
		sets[i] = gitProject(b, m.opts)
		start := time.Now()
		if res := sets[i].Call(ctx, "run_command", args); res.IsError {
			b.Fatal(res.Output)
		}
		if m.name == "workspace-write" {
			first = time.Since(start)
		}
	}
	for b.Loop() {
		// Ten rounds an iteration give a median worth reading even when
		// the benchmark time allows only a few iterations.
		for range 10 {
			for i, ts := range sets {
				start := time.Now()
				if res := ts.Call(ctx, "run_command", args); res.IsError {
					b.Fatal(res.Output)
				}
				ds[i] = append(ds[i], time.Since(start))
			}
		}
	}
	// Medians, because a shared machine's outliers swamp the mean.
	median := make([]float64, len(modes))
	for i, m := range modes {
		slices.Sort(ds[i])
		median[i] = float64(ds[i][len(ds[i])/2]) / float64(time.Millisecond)
		b.ReportMetric(median[i], m.name+"-ms")
	}
	b.ReportMetric(median[2]-median[0], "overhead-median-ms")
	b.ReportMetric(float64(first)/float64(time.Millisecond), "first-ms")
}

func TestRunCommandExtraWritableDirectory(t *testing.T) {
	t.Parallel()
	cache, other := workerstest.OutsideDir(t), workerstest.OutsideDir(t)
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Writable: []string{cache}}})
	mustOK(t, call(t, ts, "run_command", map[string]any{"command": "echo x > " + cache + "/entry"}))
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "echo x > " + other + "/entry"}), "the directories the user made writable")
	if _, err := os.Stat(filepath.Join(other, "entry")); !os.IsNotExist(err) {
		t.Fatal("a directory that was not made writable was written")
	}
}

// BenchmarkSandboxedHardStop measures a hard stop of a sandboxed command:
// from the cancel to run_command's return, with the whole process group
// gone. The target is a p99 under 100 ms, as for unsandboxed commands.
func BenchmarkSandboxedHardStop(b *testing.B) {
	ts := gitProject(b, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.WorkspaceWrite}})
	args := json.RawMessage(`{"command": "echo started; sleep 60"}`)
	var ds []time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan time.Time, 1)
		go func() {
			ts.Call(ctx, "run_command", args)
			done <- time.Now()
		}()
		// Let the helper confine itself and the shell start.
		time.Sleep(60 * time.Millisecond)
		start := time.Now()
		cancel()
		ds = append(ds, (<-done).Sub(start))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)])/float64(time.Millisecond), "p99-ms")
}
