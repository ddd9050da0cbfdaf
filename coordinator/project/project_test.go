package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/spf13/afero"
)

// env is a process environment for Open with a local endpoint (no key
// needed) and nothing from the developer's own configuration.
func env(t testing.TB) func(string) string {
	home := t.TempDir()
	vars := map[string]string{
		"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".state"),
	}
	t.Setenv("XDG_CONFIG_HOME", vars["XDG_CONFIG_HOME"])
	return func(k string) string { return vars[k] }
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A task left in progress whose progress entry for its attempt was
// written is marked done under the lock, whichever session wrote the
// entry; one without is reset to open. The person hears which.
func TestInProgressTaskWithItsEntryIsDone(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, memory.TasksFile), "# Tasks\n\n- [~] one <!-- ralph:id=t1 attempts=1 -->\n- [~] two <!-- ralph:id=t2 attempts=1 -->\n")
	if err := memory.AppendProgress(afero.NewOsFs(), dir, memory.ProgressEntry{Title: "one", SessionID: "20250101T000000Z-aaaaaa", TaskID: "t1", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	var notices []string
	p, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Notify: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := read(t, filepath.Join(dir, memory.TasksFile)); !strings.Contains(got, "- [x] one") || !strings.Contains(got, "- [ ] two") {
		t.Fatalf("after recovery:\n%s", got)
	}
	want := "recovered: reset 1 task a ralph that is gone left in progress; marked t1 done (its progress entry was written), left in progress by a ralph that is gone"
	if strings.Join(notices, "\n") != want {
		t.Fatalf("notices %q, want %q", notices, want)
	}
}

// A task left in progress is reset under the lock whatever session.json
// says — even with no session.json at all — and a task loop whose own
// record was lost, with no other copy of its settings, is not resumed
// with the defaults, which would skip the verify the person chose: the
// resume says so in one sentence (issue 67).
func TestOrphanedInProgressTaskIsResetAndALostLoopIsNotResumed(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, memory.TasksFile), "# Tasks\n\n- [~] task 01 <!-- ralph:id=t1 attempts=1 -->\n")
	if err := os.MkdirAll(filepath.Join(dir, memory.SessionsDir, "20261122T074125Z-b32b93102f0a"), 0o755); err != nil {
		t.Fatal(err)
	}
	var notices []string
	ran := false
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Resume: true,
		Notify: func(s string) { notices = append(notices, s) },
		Run: func(s *memory.RunConfig) (*memory.RunConfig, error) {
			ran = true
			return &memory.RunConfig{MaxIterations: 5, OnError: "retry"}, nil
		}})
	if err == nil || !strings.Contains(err.Error(), "its record is missing, and no other copy holds the settings it saved") || ran {
		t.Fatalf("resume of a loop whose settings were lost: %v (run settings asked for: %v), want a refusal", err, ran)
	}
	if got := read(t, filepath.Join(dir, memory.TasksFile)); !strings.Contains(got, "- [ ] task 01") {
		t.Fatalf("the orphaned task was not reset:\n%s", got)
	}
	joined := strings.Join(notices, "\n")
	if !strings.Contains(joined, "reset 1 task") {
		t.Fatalf("notices %q, want the reset", notices)
	}
}

// A new session is on disk, complete, when Open returns; the run
// configuration is saved with it and a resume gets it back.
func TestRunConfigurationIsSavedAndRestored(t *testing.T) {
	dir := t.TempDir()
	// The agent must exist: Open checks that it can start.
	if err := os.WriteFile(filepath.Join(dir, "a.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := env(t)
	write(t, filepath.Join(dir, memory.TasksFile), "- [ ] one\n")
	want := &memory.RunConfig{Agent: "exec:./a.sh", AgentArgs: []string{"--fast", "x y"}, Verify: "go test ./...", Parallel: 3, Retries: 1, OnError: "skip"}
	p, err := Open(context.Background(), Options{Dir: dir, Getenv: getenv, Mode: ModeRun,
		Run: func(*memory.RunConfig) (*memory.RunConfig, error) { return want, nil }})
	if err != nil {
		t.Fatal(err)
	}
	id := p.Session.ID
	st, err := memory.LoadSessionState(p.Fs, dir, id)
	if err != nil || st.Status != memory.StatusRunning || !reflect.DeepEqual(st.Run, want) {
		t.Fatalf("the session is not on disk as started: %+v, %v", st, err)
	}
	_ = p.Close()

	var got *memory.RunConfig
	p, err = Open(context.Background(), Options{Dir: dir, Getenv: getenv, Resume: true,
		Run: func(s *memory.RunConfig) (*memory.RunConfig, error) { got = s; return s, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Session.ID != id || p.Mode != ModeRun || !reflect.DeepEqual(got, want) {
		t.Fatalf("resume: session %s mode %s run %+v", p.Session.ID, p.Mode, got)
	}
}

// A bad run configuration is bad input: nothing is created.
func TestBadRunConfigurationChangesNothing(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Mode: ModeRun,
		Run: func(*memory.RunConfig) (*memory.RunConfig, error) { return nil, errors.New("--until: bad") }})
	if !errors.Is(err, ErrBadRunConfig) || ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d)", err, ExitCode(err))
	}
	if ids, _ := memory.ListSessions(afero.NewOsFs(), dir); len(ids) != 0 {
		t.Fatalf("sessions created: %v", ids)
	}
}

// A task loop with no task to work is bad input, refused before any
// session is recorded: one would say it runs, and the next ralph would
// recover it.
func TestRunWithoutTasksChangesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, memory.TasksFile), "# Tasks\n\nnothing yet\n")
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Mode: ModeRun,
		Run: func(*memory.RunConfig) (*memory.RunConfig, error) { return &memory.RunConfig{}, nil }})
	if !errors.Is(err, planfile.ErrNoTasks) || ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d)", err, ExitCode(err))
	}
	if ids, _ := memory.ListSessions(afero.NewOsFs(), dir); len(ids) != 0 {
		t.Fatalf("sessions created: %v", ids)
	}
}

// A session directory a crash left half made is removed under the lock
// and never taken for a session.
func TestHalfMadeSessionIsRemoved(t *testing.T) {
	dir := t.TempDir()
	half := filepath.Join(dir, memory.SessionsDir, ".new-20261122T074125Z-b32b93102f0a")
	write(t, filepath.Join(half, "session.json"), "{")
	_, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Resume: true})
	if !errors.Is(err, memory.ErrNoSession) {
		t.Fatalf("resume with only a half-made session: %v", err)
	}
	if _, err := os.Stat(half); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the half-made session is still there")
	}
}

// Recovery goes by the sessions' own records, which the summary
// .ralph/session.json is derived from without being made durable by
// itself: a summary a crash of the machine left behind neither marks a
// finished session interrupted nor hides a newer one that was running.
func TestRecoveryGoesByTheSessionsOwnRecords(t *testing.T) {
	dir := t.TempDir()
	fs := afero.NewOsFs()
	summary := filepath.Join(dir, memory.SessionFile)
	open := func() []string {
		t.Helper()
		var notices []string
		p, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Mode: ModeOneShot,
			Notify: func(s string) { notices = append(notices, s) }})
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Session.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted })
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		return notices
	}

	// A session that completed, whose summary still says running.
	a, err := memory.CreateSession(fs, dir, "20250301T120000Z-aaaaaa", memory.State{Status: memory.StatusRunning, Mode: ModeOneShot})
	if err != nil {
		t.Fatal(err)
	}
	running := read(t, summary)
	if err := a.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted }); err != nil {
		t.Fatal(err)
	}
	write(t, summary, running)
	if notices := open(); len(notices) > 0 {
		t.Fatalf("a completed session was recovered: %q", notices)
	}
	if st, _ := memory.LoadSessionState(fs, dir, a.ID); st.Status != memory.StatusCompleted {
		t.Fatalf("the completed session is now %q", st.Status)
	}

	// A newer session left running, whose summary never landed.
	before := read(t, summary)
	// Its id must sort after the session open() just made, which a fast
	// machine can start within the same millisecond: a second on.
	b, err := memory.CreateSession(fs, dir, memory.NewID(time.Now().Add(time.Second)), memory.State{Status: memory.StatusRunning, Mode: ModeOneShot})
	if err != nil {
		t.Fatal(err)
	}
	write(t, summary, before)
	notices := open()
	if len(notices) != 1 || !strings.Contains(notices[0], "session "+b.ID+" was left running") {
		t.Fatalf("the running session was not recovered: %q", notices)
	}
	if st, _ := memory.LoadSessionState(fs, dir, b.ID); st.Status != memory.StatusInterrupted {
		t.Fatalf("the running session is now %q", st.Status)
	}
}

// TestSocketBoundAheadGoesWithTheProject: a one-shot binds its control
// socket while it opens; closed without ever serving it (a run that ended
// before it began), the project leaves no socket file behind.
func TestSocketBoundAheadGoesWithTheProject(t *testing.T) {
	dir := t.TempDir()
	p, err := Open(context.Background(), Options{Dir: dir, Getenv: env(t), Mode: ModeOneShot})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(control.SocketPathIn(dir, os.Getpid(), os.Getenv)); !os.IsNotExist(err) {
		t.Fatalf("a socket was left behind: %v", err)
	}
}

// The overrides go over the configuration; a resumed session keeps the
// model it was started with unless they give one (Saved), and an
// override that fails is bad input.
func TestOverridesAndTheSavedModel(t *testing.T) {
	dir := t.TempDir()
	getenv := env(t)
	model := func(m string) Overrides {
		return Overrides{Saved: []string{"model"}, Apply: func(c *config.Config) error { c.Model = m; return nil }}
	}
	open := func(resume bool, o Overrides) (*Project, error) {
		return Open(context.Background(), Options{Dir: dir, Getenv: getenv, Mode: ModeChat, Resume: resume, Overrides: o})
	}
	p, err := open(false, model("first-model"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.Model != "first-model" {
		t.Fatalf("model %q", p.Config.Model)
	}
	p.CloseConversation()
	_ = p.Close()
	for _, c := range []struct {
		o    Overrides
		want string
	}{{Overrides{}, "first-model"}, {model("second-model"), "second-model"}} {
		p, err := open(true, c.o)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Config.Model
		p.CloseConversation()
		_ = p.Close()
		if got != c.want {
			t.Fatalf("resumed with %+v: model %q, want %q", c.o.Saved, got, c.want)
		}
	}
	_, err = open(false, Overrides{Apply: func(*config.Config) error { return errors.New("refused") }})
	if !errors.Is(err, config.ErrInvalid) || ExitCode(err) != 2 {
		t.Fatalf("a failing override: %v", err)
	}
}
