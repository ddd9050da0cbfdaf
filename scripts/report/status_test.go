package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

func newProject(t testing.TB) afero.Fs {
	fs := afero.NewMemMapFs()
	must(t, fs.MkdirAll(root, 0o755))
	return fs
}

// writeLock writes a lock file by hand, as a ralph that is gone (or on
// another host) would have left it.
func writeLock(t testing.TB, fs afero.Fs, info memory.LockInfo) {
	b, err := json.Marshal(info)
	must(t, err)
	writeFile(t, fs, filepath.Join(root, memory.LockFile), string(b))
}

func hasWarning(r StatusReport, sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestStatusEmptyProject(t *testing.T) {
	fs := newProject(t)
	r, err := Status(fs, root, t0)
	must(t, err)
	if r.Session != nil || r.Lock.State != memory.LockFree || r.Lock.Holder != nil || r.Tasks.Total != 0 || len(r.Warnings) != 0 {
		t.Fatalf("empty project: %+v", r)
	}
	want := "project  /proj\nstatus   none\ntasks    none\nlock     free\n"
	if got := r.Text(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"session":null`) || !strings.Contains(string(b), `"lock":{"state":"free"}`) {
		t.Errorf("json: %s", b)
	}
}

func TestStatusMissingProject(t *testing.T) {
	if _, err := Status(afero.NewMemMapFs(), "/nowhere", t0); err == nil {
		t.Fatal("no error for a missing project directory")
	}
}

func TestStatusRunningSessionWithLiveLock(t *testing.T) {
	fs := newProject(t)
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning, Mode: "run", Model: "gpt-test", StartedAt: t0})
	must(t, err)
	must(t, s.SaveState(func(st *memory.State) { st.Iteration, st.Turns = 4, 9; st.CurrentTask = "t3" }))
	writeFile(t, fs, filepath.Join(root, memory.TasksFile), tasksMD)
	lock, err := memory.AcquireLock(fs, root, idA, false)
	must(t, err)
	defer lock.Release()

	now := lock.Info().AcquiredAt.Add(3*time.Minute + 400*time.Millisecond)
	r, err := Status(fs, root, now)
	must(t, err)
	if r.Session == nil || r.Session.Status != memory.StatusRunning || r.Session.SessionID != idA {
		t.Fatalf("session: %+v", r.Session)
	}
	if r.Lock.State != memory.LockHeld || r.Lock.Holder == nil || r.Lock.Holder.PID != os.Getpid() || r.Lock.Age != "3m00s" {
		t.Fatalf("lock: %+v", r.Lock)
	}
	wantCounts := memory.TaskCounts{Open: 2, Done: 1, Failed: 1, Total: 4}
	if r.Tasks != wantCounts || r.NextTask != "Add a --verbose flag" {
		t.Errorf("tasks %+v next %q", r.Tasks, r.NextTask)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings: %q", r.Warnings)
	}
	txt := r.Text()
	for _, want := range []string{
		"status    running\n",
		"session   " + idA + "\n",
		"mode      run\n",
		"model     gpt-test\n",
		"progress  iteration 4, 9 turns\n",
		"tokens    0 in / 0 out, cost unknown\n",
		"current   t3\n",
		"tasks     1 done, 2 open, 1 failed (4 total)\n",
		"next      Add a --verbose flag\n",
		"lock      held by pid ",
		"session " + idA + " for 3m00s\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	assertAligned(t, txt)
}

// assertAligned checks every value starts in the same column: the labels
// are padded to the longest.
func assertAligned(t *testing.T, txt string) {
	t.Helper()
	col := -1
	for _, line := range strings.Split(strings.TrimSuffix(txt, "\n"), "\n") {
		m := regexp.MustCompile(`^\S+\s+`).FindString(line)
		if col < 0 {
			col = len(m)
		}
		if len(m) != col {
			t.Errorf("line %q: value at column %d, want %d", line, len(m), col)
		}
	}
}

func TestStatusRunningWithoutLockWarns(t *testing.T) {
	fs := newProject(t)
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning, StartedAt: t0})
	must(t, err)
	must(t, s.SaveState(nil))
	r, err := Status(fs, root, time.Now())
	must(t, err)
	if !hasWarning(r, "no live ralph holds the lock") {
		t.Errorf("no crash warning: %q", r.Warnings)
	}
}

func TestStatusCompletedSession(t *testing.T) {
	fs := newProject(t)
	fixtureA(t, fs)
	now := time.Now()
	r, err := Status(fs, root, now)
	must(t, err)
	if r.Session == nil || r.Session.Status != memory.StatusCompleted || r.Session.Usage.InputTokens != 1200 {
		t.Fatalf("session: %+v", r.Session)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings for a clean finished session: %q", r.Warnings)
	}
	txt := r.Text()
	for _, want := range []string{"status    completed\n", "tokens    1,200 in / 300 out, cost unknown\n",
		"issues    2 errors, 1 retry, 0 interruptions\n", "updated   just now\n", "lock      free\n"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	assertAligned(t, txt)
}

func TestStatusCorruptSessionIsAWarning(t *testing.T) {
	fs := newProject(t)
	writeFile(t, fs, filepath.Join(root, memory.SessionFile), `{"session_id": "x", "status": `)
	r, err := Status(fs, root, t0)
	must(t, err)
	if r.Session != nil || !hasWarning(r, "session.json is corrupt") {
		t.Fatalf("session %+v warnings %q", r.Session, r.Warnings)
	}
	if txt := r.Text(); !strings.Contains(txt, "status   none\n") || !strings.Contains(txt, "warning  ") {
		t.Errorf("text:\n%s", txt)
	}
}

func TestStatusStaleLock(t *testing.T) {
	fs := newProject(t)
	host, _ := os.Hostname()
	// No process has pid 2^30: pid_max is at most 2^22 on Linux.
	writeLock(t, fs, memory.LockInfo{PID: 1 << 30, Hostname: host, SessionID: idA, AcquiredAt: t0})
	r, err := Status(fs, root, t0.Add(time.Hour))
	must(t, err)
	if r.Lock.State != memory.LockStale || r.Lock.Holder == nil || r.Lock.Age != "1h00m" || !hasWarning(r, "the lock is stale") {
		t.Fatalf("lock %+v warnings %q", r.Lock, r.Warnings)
	}
	if txt := r.Text(); !strings.Contains(txt, "lock     stale (pid 1073741824 on "+host+", session "+idA+", gone)\n") {
		t.Errorf("text:\n%s", txt)
	}
}

func TestStatusForeignLock(t *testing.T) {
	fs := newProject(t)
	writeLock(t, fs, memory.LockInfo{PID: 42, Hostname: "build-box-7", AcquiredAt: t0})
	r, err := Status(fs, root, t0.Add(90*time.Second))
	must(t, err)
	if r.Lock.State != memory.LockForeign || !hasWarning(r, "build-box-7") {
		t.Fatalf("lock %+v warnings %q", r.Lock, r.Warnings)
	}
	if txt := r.Text(); !strings.Contains(txt, "lock     held from another host (pid 42 on build-box-7) for 1m30s\n") {
		t.Errorf("text:\n%s", txt)
	}
}

// countingFs records every file opened, to prove status leaves the logs
// alone.
type countingFs struct {
	afero.Fs
	opened []string
}

func (c *countingFs) Open(name string) (afero.File, error) {
	c.opened = append(c.opened, name)
	return c.Fs.Open(name)
}

func (c *countingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	c.opened = append(c.opened, name)
	return c.Fs.OpenFile(name, flag, perm)
}

func TestStatusNeverReadsLogs(t *testing.T) {
	fs := newProject(t)
	fixtureA(t, fs)
	cfs := &countingFs{Fs: fs}
	_, err := Status(cfs, root, time.Now())
	must(t, err)
	for _, p := range cfs.opened {
		if strings.HasSuffix(p, ".jsonl") || strings.Contains(p, memory.SessionsDir) {
			t.Errorf("status opened %s", p)
		}
	}
}

func TestSessionsTable(t *testing.T) {
	now := t0.Add(time.Hour)
	reg := []memory.RegistryEntry{
		{Root: "/srv/old", SessionID: "20261001T000000Z-111111111111", Status: "completed", Mode: "oneshot", UpdatedAt: t0.Add(-40 * 24 * time.Hour)},
		{Root: "/srv/api", SessionID: idA, Status: "running", Mode: "run", UpdatedAt: now.Add(-5 * time.Second), Turns: 4, CostUSD: ptr(0.02), FirstPrompt: "fix the parser"},
		{Root: "/srv/web", SessionID: idRun, Status: "interrupted", UpdatedAt: now.Add(-3 * time.Hour)},
	}
	r := sessionsAt(reg, now)
	if r.Sessions[0].Root != "/srv/api" || r.Sessions[2].Root != "/srv/old" {
		t.Fatalf("not newest first: %+v", r.Sessions)
	}
	want := "project   status       mode     session                        updated     turns   cost  first prompt\n" +
		"/srv/api  running      run      " + idA + "  5s ago          4  $0.02  fix the parser\n" +
		"/srv/web  interrupted  -        " + idRun + "  3h ago          0      -\n" +
		"/srv/old  completed    oneshot  20261001T000000Z-111111111111  " + t0.Add(-40*24*time.Hour).Local().Format("2006-01-02") + "      0      -\n"
	if got := r.Text(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	empty := Sessions(nil)
	if b, _ := json.Marshal(empty); string(b) != `{"sessions":[]}` {
		t.Errorf("empty json %s", b)
	}
	if empty.Text() != "no sessions yet\n" {
		t.Errorf("empty text %q", empty.Text())
	}
}

// TestStatusShowsWaitsAndTheBreaker: a running loop that waits for a
// limit says until when and how long that is; its breaker says its state.
func TestStatusShowsWaitsAndTheBreaker(t *testing.T) {
	fs := newProject(t)
	until := t0.Add(65 * time.Minute)
	s, err := memory.CreateSession(fs, root, "20261121T004808Z-abcdef", memory.State{Status: memory.StatusRunning, Mode: "run", StartedAt: t0})
	must(t, err)
	must(t, s.SaveState(func(st *memory.State) {
		st.Wait = &memory.Wait{Reason: memory.WaitRateLimit, Until: until, Text: "waiting for the rate limit until 01:53"}
		st.Breaker = &memory.Breaker{State: memory.BreakerOpen, Until: t0.Add(4 * time.Minute), Cooldown: memory.Duration(5 * time.Minute), Trips: 1}
	}))
	r, err := Status(fs, root, t0)
	must(t, err)
	text := r.Text()
	for _, want := range []string{
		"waiting   waiting for the rate limit until 01:53 (in 1h05m)\n",
		"breaker   open until " + t0.Add(4*time.Minute).Local().Format("15:04") + " (in 4m00s): no task starts; cooldown 5m00s, tripped 1 time\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"wait":{"reason":"rate_limit","until":"2026-11-21T01:53:08Z"`) || !strings.Contains(string(b), `"breaker":{"state":"open"`) {
		t.Errorf("status --json lacks the wait or the breaker: %s", b)
	}
	// A session that is no longer running waits for nothing.
	must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusInterrupted }))
	r, _ = Status(fs, root, t0)
	if strings.Contains(r.Text(), "waiting") {
		t.Errorf("an interrupted session still shows its wait:\n%s", r.Text())
	}
}
