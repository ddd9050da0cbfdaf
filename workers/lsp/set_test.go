package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/lsp/lsptest"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(lsptest.Env); mode != "" {
		lsptest.Serve(mode)
	}
	os.Exit(m.Run())
}

// diskFiles reads the test's files from the disk: the tests stand in
// for the file tools' door.
type diskFiles struct{}

func (diskFiles) ReadFile(_ context.Context, abs string) (string, error) {
	b, err := os.ReadFile(abs)
	return string(b), err
}

func (diskFiles) Exists(abs string) bool {
	fi, err := os.Stat(abs)
	return err == nil && !fi.IsDir()
}

// fakeSet is a Set whose one server "fake" is the fake language server
// in mode, for .go files, started outside any sandbox.
func fakeSet(t *testing.T, mode string, edit func(*Options)) (*Set, string) {
	t.Helper()
	root := t.TempDir()
	opts := Options{
		Root:   root,
		Config: config.LSP{Wait: 3 * time.Second, FirstWait: 5 * time.Second, Servers: []config.LSPServer{{Name: "fake", Command: "fake", Filetypes: []string{"go"}, RootMarkers: []string{"go.mod"}}}},
		Env:    os.Environ(),
		Start:  func(_ context.Context, cmd *exec.Cmd) (*workers.Group, error) { return workers.StartGroup(cmd) },
		Files:  diskFiles{},
		OnPath: func(string) bool { return false },
		Command: func(dir string, env []string, _ string, _ ...string) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = dir
			cmd.Env = append(env, lsptest.Env+"="+mode)
			return cmd
		},
	}
	if edit != nil {
		edit(&opts)
	}
	s := New(opts)
	t.Cleanup(s.Close)
	return s, root
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func reportText(rs []Report) string { return Append("wrote 10 bytes to main.go", rs) }

// TestEditGetsDiagnosticsInTheFormat: errors first, then warnings, in
// the lines the end-to-end tests read, after one blank line; the fix
// clears them.
func TestEditGetsDiagnosticsInTheFormat(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "ok", nil)
	f := write(t, filepath.Join(root, "main.go"), "package main\nWARN: unused x\n\tfoo() // ERR: undefined: foo\n")
	got := reportText(s.Edited(context.Background(), []string{f}))
	want := "wrote 10 bytes to main.go\n\ndiagnostics from fake for main.go (errors first; 2 of 2):\n" +
		"main.go:3:11: error: undefined: foo\nmain.go:2:1: warning: unused x"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	write(t, f, "package main\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || got[0].String() != "diagnostics from fake for main.go: none" {
		t.Fatalf("after the fix: %v", got)
	}
}

// TestStaleVersionIsIgnored: a publish for an older version is not the
// edit's answer.
func TestStaleVersionIsIgnored(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "stale", nil)
	f := write(t, filepath.Join(root, "a.go"), "package a\nERR: fresh\n")
	for range 2 {
		got := s.Edited(context.Background(), []string{f})
		if len(got) != 1 || strings.Contains(got[0].String(), "stale") || !strings.Contains(got[0].String(), "error: fresh") {
			t.Fatalf("got %v", got)
		}
	}
}

// TestNoVersionSettles: a server that gives no version is answered by
// the first publish after the edit.
func TestNoVersionSettles(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "noversion", nil)
	f := write(t, filepath.Join(root, "a.go"), "ERR: one\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || !strings.Contains(got[0].String(), "a.go:1:1: error: one") {
		t.Fatalf("got %v", got)
	}
}

// TestSlowPhasesAreWaitedFor: a server that gives no version and is
// slow with its first publish (nothing, its syntax check) is given the
// time for its next (the type error): a quarter of the first's, past
// the 300ms settle a quick server gets. The fake's second publish comes
// 350 ms after its first, past 300 ms and 400 ms short of 3 s / 4: a
// late timer on a busy machine moves both.
func TestSlowPhasesAreWaitedFor(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "phases", nil)
	f := write(t, filepath.Join(root, "a.go"), "ERR: type error\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || !strings.Contains(got[0].String(), "a.go:1:1: error: type error") {
		t.Fatalf("got %v", got)
	}
}

// TestWaitIsBounded: a server that never publishes costs the edit the
// wait, and the result says so with the configured figure.
func TestWaitIsBounded(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "silent", func(o *Options) { o.Config.Wait, o.Config.FirstWait = 500*time.Millisecond, time.Second })
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	start := time.Now()
	got := s.Edited(context.Background(), []string{f})
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the first wait took %s", d)
	}
	if len(got) != 1 || got[0].String() != "diagnostics from fake for a.go: no answer within 1s" {
		t.Fatalf("got %v", got)
	}
	start = time.Now()
	got = s.Edited(context.Background(), []string{f})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the second wait took %s", d)
	}
	if len(got) != 1 || got[0].String() != "diagnostics from fake for a.go: no answer within 500ms" {
		t.Fatalf("got %v", got)
	}
}

// TestSlowServerIsNotWaitedPastTheBound: a server answering later than
// the wait is "no answer"; its next answer is read by the next edit.
func TestSlowServerIsNotWaitedPastTheBound(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "slow", func(o *Options) { o.Config.Wait, o.Config.FirstWait = 300*time.Millisecond, 300*time.Millisecond })
	f := write(t, filepath.Join(root, "a.go"), "ERR: late\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || got[0].Outcome != NoAnswer {
		t.Fatalf("got %v", got)
	}
}

// TestCrashIsOneLineAndGivenUp: a crashing server is named in one line
// with why; it is started once more, and after its second crash left
// alone, the edits going on.
func TestCrashIsOneLineAndGivenUp(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "crash", nil)
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	for i := range 2 {
		got := s.Edited(context.Background(), []string{f})
		if len(got) != 1 || got[0].Outcome != Stopped || !strings.HasPrefix(got[0].String(), "language server fake stopped: it exited with status 3") ||
			!strings.Contains(got[0].String(), "boom") || strings.Contains(got[0].String(), "\n") {
			t.Fatalf("edit %d: got %v", i+1, got)
		}
	}
	if got := s.Edited(context.Background(), []string{f}); len(got) != 0 {
		t.Fatalf("a third edit: got %v, want nothing from a server given up", got)
	}
}

// TestHangingServerIsStopped: a server that does not answer initialize
// is "no answer" for the edit and stopped once the bound passes.
func TestHangingServerIsStopped(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "hang", func(o *Options) { o.Config.Wait, o.Config.FirstWait = 200*time.Millisecond, 200*time.Millisecond })
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || got[0].Outcome != NoAnswer {
		t.Fatalf("got %v", got)
	}
	// The bound (60s) is shortened here by stopping it as the bound
	// would; it is started once more, and after its second stop named.
	for i := range 2 {
		pid := s.States()[0].Pid
		s.clients()[0].stop("it did not answer initialize within 60s")
		if workers.ProcessAlive(pid) {
			t.Fatalf("the hung server %d is alive after its stop", pid)
		}
		got := s.Edited(context.Background(), []string{f})
		if i == 0 && (len(got) != 1 || got[0].Outcome != NoAnswer) {
			t.Fatalf("after the first stop: got %v", got)
		}
		if i == 1 && (len(got) != 1 || got[0].String() != "language server fake stopped: it did not answer initialize within 60s") {
			t.Fatalf("after the second stop: got %v", got)
		}
	}
}

// TestFloodIsStoppedWithBoundedMemory: a server that sends without end
// is cut at the bound of messages a second, and stopped.
func TestFloodIsStoppedWithBoundedMemory(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "flood", func(o *Options) { o.limits = limits{messages: 500} })
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	var got []Report
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got = s.Edited(context.Background(), []string{f}); len(got) == 1 && got[0].Outcome == Stopped {
			break
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].String(), "more than 500 messages in a second") {
		t.Fatalf("got %v", got)
	}
}

// TestControlSequencesAreStripped: a server's message reaches the model
// and the terminal as one line without escape sequences.
func TestControlSequencesAreStripped(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "ok", nil)
	f := write(t, filepath.Join(root, "a.go"), "ERR: bad \x1b[31mred\x1b]0;title\x07 \u202e"+strings.Repeat("y", 500)+"\n")
	got := s.Edited(context.Background(), []string{f})
	if len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	out := got[0].String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") || strings.Count(out, "\n") != 1 || len(out) > 500 {
		t.Fatalf("the message was not made safe: %q", out)
	}
}

// TestServerAskingConfigurationIsAnswered: a server that waits for
// workspace/configuration still publishes.
func TestServerAskingConfigurationIsAnswered(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "ask", nil)
	f := write(t, filepath.Join(root, "a.go"), "ERR: asked\n")
	if got := s.Edited(context.Background(), []string{f}); len(got) != 1 || !strings.Contains(got[0].String(), "error: asked") {
		t.Fatalf("got %v", got)
	}
}

// TestLazyStartAndStopLeavesNoProcess: no server runs before the first
// edit of a file it handles (another file starts none); Close leaves no
// process behind (/proc).
func TestLazyStartAndStopLeavesNoProcess(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "ok", nil)
	txt := write(t, filepath.Join(root, "notes.txt"), "ERR: no\n")
	if got := s.Edited(context.Background(), []string{txt}); len(got) != 0 || len(s.clients()) != 0 {
		t.Fatalf("a file no server handles started one: %v", got)
	}
	if st := s.States(); len(st) != 1 || st[0].Status != "not started" {
		t.Fatalf("states before an edit: %+v", st)
	}
	f := write(t, filepath.Join(root, "sub", "a.go"), "package a\n")
	write(t, filepath.Join(root, "sub", "go.mod"), "module a\n")
	s.Edited(context.Background(), []string{f})
	st := s.States()
	if len(st) != 1 || st[0].Status != "running" || st[0].Root != "sub" || st[0].Open != 1 {
		t.Fatalf("states after an edit: %+v", st)
	}
	pid := st[0].Pid
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("the server %d is not in /proc: %v", pid, err)
	}
	s.Close()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the server %d is still in /proc after Close: %v", pid, err)
	}
	if got := s.Edited(context.Background(), []string{f}); len(got) != 0 {
		t.Fatalf("an edit after Close: %v", got)
	}
}

// TestCommandsRanResyncsOpenDocuments: after a command changed an open
// file, the server is sent its new text, and the next diagnostics tool
// call reads what it published.
func TestCommandsRanResyncsOpenDocuments(t *testing.T) {
	t.Parallel()
	s, root := fakeSet(t, "ok", nil)
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	s.Edited(context.Background(), []string{f})
	write(t, f, "ERR: from a command\n")
	s.CommandsRan(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ws := s.Workspace(); len(ws) == 1 && strings.Contains(ws[0].String(), "a.go:1:1: error: from a command") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the workspace's diagnostics: %v", s.Workspace())
}

// TestProjectServerNeedsApproval: a server a project's config names does
// not start unless approved; the refusal is one line.
func TestProjectServerNeedsApproval(t *testing.T) {
	t.Parallel()
	asked := 0
	s, root := fakeSet(t, "ok", func(o *Options) {
		o.Config.Servers[0].FromProject, o.Config.Servers[0].Source = true, "/p/.ralph/config.toml"
		o.Approve = func(context.Context, config.LSPServer) error {
			asked++
			return fmt.Errorf("the person declined it")
		}
	})
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	got := s.Edited(context.Background(), []string{f})
	if len(got) != 1 || got[0].String() != "language server fake stopped: the person declined it" || len(s.clients()) != 0 {
		t.Fatalf("got %v", got)
	}
	s.Edited(context.Background(), []string{f})
	if asked != 1 {
		t.Fatalf("asked %d times, want once", asked)
	}
}

// TestNoSandboxMeansNoDiagnostics: where the sandbox refuses a program
// that lives across commands, no server starts and the person is told
// once.
func TestNoSandboxMeansNoDiagnostics(t *testing.T) {
	t.Parallel()
	var notes []string
	s, root := fakeSet(t, "ok", func(o *Options) {
		o.Start = func(context.Context, *exec.Cmd) (*workers.Group, error) {
			return nil, fmt.Errorf("sandbox: %w", sandbox.ErrLivesAcrossCommands)
		}
		o.Notify = func(s string) { notes = append(notes, s) }
	})
	f := write(t, filepath.Join(root, "a.go"), "package a\n")
	for range 2 {
		if got := s.Edited(context.Background(), []string{f}); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ralph starts no language server here") {
		t.Fatalf("notes: %q", notes)
	}
}

// TestDeafServerDoesNotHoldTheEdit: a server that stops reading its
// input cannot hold an edit in a full pipe: the write is bounded, the
// server stopped and named.
func TestDeafServerDoesNotHoldTheEdit(t *testing.T) {
	t.Parallel()
	// The first wait is a minute, so that an edit the deaf server held
	// would wait far past the bound below, which leaves the fake's start
	// (this test binary again, under the race detector) room on a busy
	// machine: it took 4.4 s of a former 4 s bound at load 15.
	s, root := fakeSet(t, "deaf", func(o *Options) {
		o.limits = limits{write: 300 * time.Millisecond}
		o.Config.FirstWait = time.Minute
	})
	f := write(t, filepath.Join(root, "a.go"), strings.Repeat("x", 1<<20))
	start := time.Now()
	got := s.Edited(context.Background(), []string{f})
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the edit waited %s", d)
	}
	if len(got) != 1 || got[0].String() != "language server fake stopped: it read nothing ralph sent for 300ms" {
		t.Fatalf("got %v", got)
	}
}

// TestGoplsGetsAWritableCache: gopls gets GOCACHE under the temporary
// directory unless the environment or its env sets one; other servers
// get none.
func TestGoplsGetsAWritableCache(t *testing.T) {
	t.Parallel()
	gopls := config.LSPServer{Name: "gopls", Command: "/opt/bin/gopls"}
	if got := goCache(gopls, []string{"PATH=/bin"}); len(got) != 1 || !strings.HasPrefix(got[0], "GOCACHE="+os.TempDir()) {
		t.Errorf("gopls: %q", got)
	}
	if got := goCache(gopls, []string{"GOCACHE=/c"}); got != nil {
		t.Errorf("with GOCACHE set: %q", got)
	}
	gopls.Env = map[string]string{"GOCACHE": "/mine"}
	if got := goCache(gopls, nil); got != nil {
		t.Errorf("with its env's GOCACHE: %q", got)
	}
	if got := goCache(config.LSPServer{Command: "clangd"}, nil); got != nil {
		t.Errorf("clangd: %q", got)
	}
}
