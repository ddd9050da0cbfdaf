package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestSubdirectoryMeetsTheRunningProject: ralph started in a subdirectory
// of a project another ralph works in finds that project: it exits 3
// naming the holder, status shows the running session, and no second
// .ralph/ appears.
func TestSubdirectoryMeetsTheRunningProject(t *testing.T) {
	t.Parallel()
	// About 20 s of streaming: the holder must still be running when the
	// second ralph and status have started, which took longer than
	// slowServer's 3 s in the whole suite on two busy cores.
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: strings.Repeat("slow ", 40), ChunkSize: 5, ChunkDelayMS: 500}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	sub := filepath.Join(dir, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	holder, out, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--output-format", "stream-json", "hold")
	waitFor(t, "the first ralph to start streaming", 10*time.Second, func() bool { return strings.Contains(out.String(), "text_delta") })

	r := ralph(t, sub, env, nil, "--base-url", srv.URL, "--json", "second")
	if r.code != 3 || !strings.Contains(r.stderr, "pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("from a subdirectory: exit %d, want 3 naming pid %d: %s", r.code, holder.Process.Pid, r.stderr)
	}
	st := ralph(t, sub, env, nil, "status", "--json")
	if st.code != 0 || !strings.Contains(st.stdout, `"status": "running"`) || !strings.Contains(st.stdout, `"state": "held"`) {
		t.Fatalf("status from a subdirectory (exit %d): %s %s", st.code, st.stdout, st.stderr)
	}
	for _, d := range []string{sub, filepath.Join(dir, "pkg")} {
		if _, err := os.Stat(filepath.Join(d, ".ralph")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a second .ralph/ appeared in %s", d)
		}
	}
	if code, _ := exitCode(t, holder, 90*time.Second); code != 0 {
		t.Fatalf("holder exit %d", code)
	}
}

// TestGitTopLevelIsTheProject: with no .ralph/ anywhere, ralph in a
// subdirectory of a git work tree records its session at the top.
func TestGitTopLevelIsTheProject(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"x","responses":[{"text":"hi"}]}`)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "cmd")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, sub, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "session.json")); err != nil {
		t.Fatalf("no session at the git top level: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub, ".ralph")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a .ralph/ appeared in the subdirectory")
	}
}

// TestForceStopsALiveHolderFirst: --force against a live ralph on this
// host stops it (it saves and exits) before taking over, so there are
// never two writers.
func TestForceStopsALiveHolderFirst(t *testing.T) {
	t.Parallel()
	srv := slowServer(t)
	dir := t.TempDir()
	env := cleanEnv(t)
	holder, out, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--output-format", "stream-json", "hold")
	waitFor(t, "the first ralph to start streaming", 10*time.Second, func() bool { return strings.Contains(out.String(), "text_delta") })
	exited := make(chan int, 1)
	go func() {
		err := holder.Wait()
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) {
			exited <- ee.ExitCode()
			return
		}
		exited <- 0
	}()
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "--force", "take over")
	if r.code != 0 {
		t.Fatalf("--force: exit %d: %s", r.code, r.stderr)
	}
	select {
	case code := <-exited:
		if code != 128+int(syscall.SIGTERM) {
			t.Fatalf("the old holder exited %d, want 143 (stopped by SIGTERM)", code)
		}
	default:
		t.Fatal("the old holder was still running when --force finished")
	}
	if !strings.Contains(r.stderr, "stopped the ralph (pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("--force did not say whom it stopped: %s", r.stderr)
	}
	if !strings.Contains(out.String(), `"subtype":"interrupted"`) {
		t.Fatalf("the old holder did not save and report its interruption: %s", out.String())
	}
}

// TestDuplicateTaskIDs: two tasks with one id each run once; the second
// gets a fresh id with a one-line notice.
func TestDuplicateTaskIDs(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tasks := "# Tasks\n\n- [ ] task 01 <!-- ralph:id=t1 -->\n- [ ] task 02 <!-- ralph:id=t1 -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run")
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^ralph: RALPH_TASKS.md line 4: task "task 02" had the duplicate id t1; it is now \S+$`).MatchString(r.stderr) {
		t.Fatalf("no one-line notice: %q", r.stderr)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "done.log"))
	for _, title := range []string{"task 01", "task 02"} {
		if n := strings.Count(string(log), title+"\n"); n != 1 {
			t.Fatalf("%q done %d times:\n%s", title, n, log)
		}
	}
	if n := len(srv.Requests()); n > 6 {
		t.Fatalf("%d model requests for two tasks", n)
	}
}
