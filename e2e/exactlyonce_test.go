//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"github.com/sashabaranov/go-openai"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 67: a task's completion is one durable record. Its progress entry,
// marked with the task and the attempt, is synced before the task is
// marked done, and recovery marks done a task left in progress whose
// entry is there. These tests break `ralph run` at the system call with
// strace's fault injection — the rename of RALPH_TASKS.md that marks a
// task done fails (EIO) or ralph is killed there; the append of the
// progress entry finds the disk full — and then run ralph again: every
// task is worked once and has one entry.

// taskOfRequest is the id and title of the task a request's task prompt
// names (the last one, as the agent was given it), "" for none.
func taskOfRequest(msgs []openai.ChatCompletionMessage) (id, title string) {
	for _, m := range msgs {
		if m.Role == "user" {
			if sm := taskPromptRe.FindStringSubmatch(m.Content); sm != nil {
				id, title = sm[1], sm[2]
			}
		}
	}
	return id, title
}

// workModel scripts the task agents: each appends its task's title to
// work.log whenever it is asked to work it (no check of what is there, so
// work.log counts the attempts that did the work), then calls
// complete_task. gate, when not nil, is called with the task's id before
// the agent's last answer, after which ralph settles the task.
func workModel(gate func(id string)) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		id, title := taskOfRequest(msgs)
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch last := msgs[len(msgs)-1]; {
		case last.Role == "user":
			return llmtest.Response{Text: "working", ToolCalls: []llmtest.ToolCall{{Name: "run_command",
				Arguments: args(map[string]string{"command": fmt.Sprintf("echo %q >> work.log", title)})}}}
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
		}
		if gate != nil {
			gate(id)
		}
		return llmtest.Response{Text: "done with " + title}
	}
}

// straceArgs are strace's arguments to inject fault (its -e inject=
// value, "renameat:error=EIO:when=1") into the system calls on file of
// the project dir, logging them to out. ralph reaches its files through a
// descriptor of the project directory, so strace is given the file's path
// relative to the project (where it runs) and absolute; the path filter
// also keeps the fault from git or any other child.
func straceArgs(dir, file, fault, out string) []string {
	return []string{"-f", "-q", "-e", "signal=none", "-o", out, "-e", "trace=" + strings.SplitN(fault, ":", 2)[0],
		"-e", "inject=" + fault, "-P", file, "-P", filepath.Join(dir, file)}
}

// faultResult is what a broken ralph run did: whether strace injected the
// fault, ralph's exit (-1 when a signal killed it) and what it said.
type faultResult struct {
	injected       bool
	code           int
	stderr, strace string
}

// injected reports whether strace's log shows the fault injected: an
// error it made up, or a call that never returned, cut short by the
// signal it sent (the caller checks that the signal killed ralph).
func injected(log, fault string) bool {
	if strings.Contains(fault, "signal=") {
		return regexp.MustCompile(`(?m)\) += \?$`).MatchString(log)
	}
	return strings.Contains(log, "(INJECTED)")
}

// runUnderStrace runs `ralph run` (and args) on titles in a new project dir
// under strace from its start, with fault injected into the calls on file.
func runUnderStrace(t *testing.T, env []string, dir string, titles []string, file, fault string, args ...string) faultResult {
	t.Helper()
	writeTasks(t, dir, titles...)
	out := filepath.Join(t.TempDir(), "strace")
	cmd := exec.Command("strace", append(append(straceArgs(dir, file, fault, out), ralphBin, "-y", "--json", "run"), args...)...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("strace: %v", err)
		}
	}
	r := faultResult{stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	log, _ := os.ReadFile(out)
	r.strace = string(log)
	r.injected = injected(r.strace, fault)
	return r
}

// taskLine matches a task's line: its state and its title.
var taskLine = regexp.MustCompile(`(?m)^- \[(.)\] (.*?) <!--`)

// inWindow reports whether the broken run left a task in progress whose
// progress entry is written: the window between the entry and the mark.
func inWindow(dir string) bool {
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	for _, m := range taskLine.FindAllStringSubmatch(string(tasks), -1) {
		if m[1] == "~" && strings.Contains(string(progress), "— "+m[2]+"\n") {
			return true
		}
	}
	return false
}

// checkOnce runs `ralph run` again, as a person would after the broken
// one, and checks that every task is done and has exactly one progress
// entry, its mark naming the task and the attempt, and that each was
// worked once — but redone, whose work was done and could not be
// recorded, which is worked again.
func checkOnce(t *testing.T, dir string, env, titles []string, redone, where string) {
	t.Helper()
	checkStateFilesParse(t, dir)
	r := ralph(t, dir, env, nil, "-y", "--json", "run")
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if r.code != 0 {
		t.Fatalf("%s: the next ralph run: exit %d\n%s\n%s\n%s", where, r.code, r.stdout, r.stderr, tasks)
	}
	if n := strings.Count(string(tasks), "- [x] "); n != len(titles) {
		t.Fatalf("%s: %d of %d tasks done:\n%s\n%s", where, n, len(titles), tasks, r.stderr)
	}
	work, _ := os.ReadFile(filepath.Join(dir, "work.log"))
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	for i, title := range titles {
		want := 1
		if title == redone {
			want = 2
		}
		if n := strings.Count(string(work), title+"\n"); n != want {
			t.Fatalf("%s: %q was worked %d times, want %d:\n%s\n%s\n%s", where, title, n, want, work, tasks, r.stderr)
		}
		if n := strings.Count(string(progress), "— "+title+"\n"); n != 1 {
			t.Fatalf("%s: %q has %d progress entries:\n%s", where, title, n, progress)
		}
		mark := regexp.MustCompile(fmt.Sprintf(`<!-- ralph:progress task=t%d attempt=\d+ session=\S+ -->`, i+1))
		if !mark.Match(progress) {
			t.Fatalf("%s: %q's entry has no mark naming its task and attempt:\n%s", where, title, progress)
		}
	}
}

// breakDone is one trial of TestExactlyOnceWhenMarkingDoneFails: `ralph
// run` of titles, whose task id's agent waits, before its last answer,
// until strace is attached to ralph with fault ready for the first rename
// of RALPH_TASKS.md — the one that marks id done, its progress entry
// written. It returns strace's log.
func breakDone(t *testing.T, dir string, titles []string, id, fault string) string {
	t.Helper()
	writeTasks(t, dir, titles...)
	out := filepath.Join(t.TempDir(), "strace")
	// The model's handler runs on the server's goroutines: ralph's pid
	// reaches it, and the tracer comes back, under mu.
	var mu sync.Mutex
	var ralphPID int
	var tracer *exec.Cmd
	srv := llmtest.NewServerFunc(workModel(func(task string) {
		mu.Lock()
		defer mu.Unlock()
		if task != id || tracer != nil {
			return
		}
		tracer = exec.Command("strace", append(straceArgs(dir, "RALPH_TASKS.md", fault, out), "-p", strconv.Itoa(ralphPID))...)
		tracer.Dir = dir
		if err := tracer.Start(); err != nil {
			t.Error(err)
			return
		}
		// Every thread of ralph must be traced before the answer goes:
		// strace follows the threads started after.
		deadline := time.Now().Add(time.Minute)
		for !allTraced(ralphPID) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer srv.Close()
	cmd := exec.Command(ralphBin, "-y", "--json", "run")
	cmd.Dir, cmd.Env = dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	mu.Lock()
	err := cmd.Start()
	if err == nil {
		ralphPID = cmd.Process.Pid
	}
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	code, _ := exitCode(t, cmd, ralphRunLimit)
	mu.Lock()
	defer mu.Unlock()
	if tracer == nil {
		t.Fatalf("%s was never settled: exit %d\n%s", id, code, stderr.String())
	}
	_ = tracer.Wait()
	log, _ := os.ReadFile(out)
	if !injected(string(log), fault) {
		t.Fatalf("%s at %s's mark: nothing injected (exit %d):\n%s\n%s", fault, id, code, log, stderr.String())
	}
	if code == 0 {
		t.Fatalf("%s at %s's mark: the run says it succeeded\n%s", fault, id, stderr.String())
	}
	if st := cmd.ProcessState.Sys().(syscall.WaitStatus); strings.Contains(fault, "signal=KILL") && st.Signal() != syscall.SIGKILL {
		t.Fatalf("%s at %s's mark: ralph was not killed (exit %d)\n%s", fault, id, code, stderr.String())
	}
	return string(log)
}

// allTraced reports whether every thread of pid has a tracer.
func allTraced(pid int) bool {
	tids, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, tid := range tids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, tid.Name()))
		if err != nil || regexp.MustCompile(`(?m)^TracerPid:\s+0$`).Match(status) {
			return false
		}
	}
	return true
}

// TestExactlyOnceWhenMarkingDoneFails is issue 67's first point: the
// write to RALPH_TASKS.md that marks a task done, after its progress
// entry was written, fails (EIO) or ralph is killed there — for each task
// of a three-task run in turn; then a normal `ralph run`. Every task is
// done and worked exactly once, with exactly one progress entry. The mark
// is one byte written in place (the checkbox), so the fault is on that
// write; strace is attached at the task's last answer, so it lands on
// that one: strace counts calls per thread, and ralph's goroutines move
// between threads. A sweep from ralph's start over the first renames of
// each thread, wherever they fall (ids, a task's start, a mark written
// whole), keeps the same promise.
func TestExactlyOnceWhenMarkingDoneFails(t *testing.T) {
	t.Parallel()
	needTool(t, "strace", "strace")
	titles := numbered(3, nil)
	for _, fault := range []string{"write:error=EIO:when=1", "write:signal=KILL:when=1"} {
		t.Run(strings.Split(fault, ":")[1], func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServerFunc(workModel(nil))
			t.Cleanup(srv.Close)
			env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
			for i := range titles {
				id := fmt.Sprintf("t%d", i+1)
				where := fmt.Sprintf("%s at %s's mark", fault, id)
				dir := t.TempDir()
				breakDone(t, dir, titles, id, fault)
				if !inWindow(dir) {
					tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
					t.Fatalf("%s: no task is left in progress with its entry written:\n%s", where, tasks)
				}
				checkOnce(t, dir, env, titles, "", where)
			}
		})
	}
	t.Run("any rename", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServerFunc(workModel(nil))
		t.Cleanup(srv.Close)
		env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
		for n := 1; n <= 3; n++ {
			fault := fmt.Sprintf("renameat:error=EIO:when=%d", n)
			dir := t.TempDir()
			r := runUnderStrace(t, env, dir, titles, "RALPH_TASKS.md", fault)
			switch {
			case !r.injected && n == 1:
				t.Fatalf("%s: nothing injected (exit %d):\n%s\n%s", fault, r.code, r.strace, r.stderr)
			case !r.injected:
				continue // no thread made n renames
			case r.code == 0:
				t.Fatalf("%s: a rename of the task file failed, and the run says it succeeded\n%s", fault, r.stderr)
			}
			checkOnce(t, dir, env, titles, "", fault)
		}
	})
}

// TestExactlyOnceWhenTheEntryCannotBeWritten is issue 67's second point:
// the disk is full for the progress entry (ENOSPC on every write of
// RALPH_PROGRESS.md). The first task is not marked done: with --max-wait
// 0 the run stops with it open; by default it goes back to open and the
// run waits for space, until a hard stop. Then a normal `ralph run` works
// it again (its work was done, but not recorded) and every task has one
// entry.
func TestExactlyOnceWhenTheEntryCannotBeWritten(t *testing.T) {
	t.Parallel()
	needTool(t, "strace", "strace")
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	titles := numbered(3, nil)
	const fault = "write:error=ENOSPC"
	t.Run("max-wait 0", func(t *testing.T) {
		t.Parallel()
		env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
		dir := t.TempDir()
		r := runUnderStrace(t, env, dir, titles, "RALPH_PROGRESS.md", fault, "--max-wait", "0")
		if !r.injected || r.code != 1 {
			t.Fatalf("injected %v, exit %d\n%s\n%s", r.injected, r.code, r.stderr, r.strace)
		}
		notDone(t, dir, r.stderr)
		for _, want := range []string{"progress entry could not be written", "is full"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the run did not say %q:\n%s", want, r.stderr)
			}
		}
		checkOnce(t, dir, env, titles, "task 01", "ENOSPC with --max-wait 0")
	})
	t.Run("waits", func(t *testing.T) {
		t.Parallel()
		env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
		dir := t.TempDir()
		writeTasks(t, dir, titles...)
		out := filepath.Join(t.TempDir(), "strace")
		cmd := exec.Command("strace", append(straceArgs(dir, "RALPH_PROGRESS.md", fault, out), ralphBin, "-y", "--json", "run")...)
		cmd.Dir, cmd.Env = dir, env
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitFor(t, "the run to wait for space", time.Minute, func() bool { return strings.Contains(stderr.String(), "waiting for space") })
		notDone(t, dir, stderr.String())
		// A hard stop ends the wait. It goes to ralph itself, strace's
		// child: strace would detach on its own.
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscan(string(kids), &pid); err != nil {
			t.Fatalf("ralph's pid from %q: %v", kids, err)
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code, _ := exitCode(t, cmd, time.Minute); code != 143 {
			t.Fatalf("exit %d after SIGTERM, want 143\n%s", code, stderr.String())
		}
		if log, _ := os.ReadFile(out); !injected(string(log), fault) {
			t.Fatalf("nothing injected:\n%s", log)
		}
		notDone(t, dir, stderr.String())
		checkOnce(t, dir, env, titles, "task 01", "ENOSPC, waiting")
	})
}

// notDone checks that the first task, whose entry could not be written,
// is not marked done and has no entry.
func notDone(t *testing.T, dir, stderr string) {
	t.Helper()
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	if strings.Contains(string(tasks), "- [x]") || strings.Contains(string(progress), "— task 01\n") {
		t.Fatalf("a task was marked done without its progress entry, or the entry is there:\n%s\n%s\n%s", tasks, progress, stderr)
	}
}
