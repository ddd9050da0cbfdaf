package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentPIDs reads the pids a fake agent recorded.
func agentPIDs(t *testing.T, files ...string) []int {
	t.Helper()
	return recordedPIDs(t, "the fake agent", 10*time.Second, files...)
}

// recordedPIDs waits up to limit for who to record a pid in each of files,
// and reads them.
func recordedPIDs(t *testing.T, who string, limit time.Duration, files ...string) []int {
	t.Helper()
	var pids []int
	for _, f := range files {
		var pid int
		waitFor(t, who+" to record "+filepath.Base(f), limit, func() bool {
			data, err := os.ReadFile(f)
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			return err == nil && pid > 0
		})
		pids = append(pids, pid)
	}
	return pids
}

// assertNothingLeft fails if any of pids still runs now that ralph has
// exited: the agent, and the process it started outside its group.
func assertNothingLeft(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if processRunning(pid) {
			_ = signalProcess(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived ralph", pid)
		}
	}
}

// startRun starts `ralph run` with an exec: agent and returns the command.
func startRun(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(ralphBin, append([]string{"run", "--on-error", "skip"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out
}

// waitExit waits for ralph to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, out *lockedBuffer, limit time.Duration) int {
	t.Helper()
	code, _ := waitCmd(t, cmd, limit, out.String)
	return code
}

// An agent that started a process in a session of its own (setsid, as
// claude does for its shell commands) and hangs: after Ctrl-C to ralph,
// and after --task-timeout, nothing of it is left.
func TestRunAgentStopLeavesNothing(t *testing.T) {
	t.Parallel()
	script := testdata("agents", "escape.sh")
	for _, how := range []string{"SIGINT", "task-timeout"} {
		for trial := range 3 {
			dir := t.TempDir()
			writeTasks(t, dir, "hang forever")
			pidFile, escFile := filepath.Join(dir, "pid"), filepath.Join(dir, "escaped")
			env := cleanEnv(t, "RALPH_TEST_PID_FILE="+pidFile, "RALPH_TEST_ESCAPED_PID_FILE="+escFile)
			args := []string{"--agent", "exec:" + script}
			if how == "task-timeout" {
				args = append(args, "--task-timeout", "1s")
			}
			cmd, out := startRun(t, dir, env, args...)
			pids := agentPIDs(t, pidFile, escFile)
			want := 1 // the task failed: it timed out
			if how == "SIGINT" {
				cmd.Process.Signal(syscall.SIGINT)
				want = 130
			}
			if code := waitExit(t, cmd, out, 20*time.Second); code != want {
				t.Fatalf("%s trial %d: exit %d, want %d\n%s", how, trial, code, want, out.String())
			}
			assertNothingLeft(t, pids)
		}
	}
}

// An agent that cleans up on SIGINT within 100 ms, as claude and codex do,
// gets the chance: ralph sends SIGINT first and waits.
func TestRunAgentGetsToCleanUp(t *testing.T) {
	t.Parallel()
	script := testdata("agents", "trap_int.sh")
	for _, how := range []string{"SIGINT", "task-timeout"} {
		dir := t.TempDir()
		writeTasks(t, dir, "hang until interrupted")
		pidFile, cleanup := filepath.Join(dir, "pid"), filepath.Join(dir, "cleaned")
		env := cleanEnv(t, "RALPH_TEST_PID_FILE="+pidFile, "RALPH_TEST_CLEANUP_FILE="+cleanup)
		args := []string{"--agent", "exec:" + script}
		if how == "task-timeout" {
			args = append(args, "--task-timeout", "1s")
		}
		cmd, out := startRun(t, dir, env, args...)
		pids := agentPIDs(t, pidFile)
		if how == "SIGINT" {
			cmd.Process.Signal(syscall.SIGINT)
		}
		waitExit(t, cmd, out, 20*time.Second)
		if data, _ := os.ReadFile(cleanup); string(data) != "cleaned\n" {
			t.Fatalf("%s: the agent's SIGINT cleanup did not run\n%s", how, out.String())
		}
		assertNothingLeft(t, pids)
	}
}

// Bad input is a usage error (exit 2, one sentence) before any task is
// touched: RALPH_TASKS.md stays byte for byte as it was.
func TestRunBadInputIsUsageError(t *testing.T) {
	t.Parallel()
	complete := testdata("agents", "complete.sh")
	bin := t.TempDir() // a PATH with bash but no agent CLI
	for _, name := range []string{"bash", "env", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			os.Symlink(p, filepath.Join(bin, name))
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--parallel", "-3"}, "--parallel cannot be negative"},
		{[]string{"--task-timeout", "-5s"}, "--task-timeout must be positive"},
		{[]string{"--task-timeout", "0s"}, "--task-timeout must be positive"},
		{[]string{"--max-cost", "-1"}, "--max-cost cannot be negative"},
		{[]string{"--max-iterations", "0"}, "--max-iterations must be at least 1"},
		{[]string{"--retries", "-1"}, "--retries cannot be negative"},
		{[]string{"--agent", "claude"}, "--agent claude needs the claude command, which is not on PATH"},
		{[]string{"--agent", "codex"}, "--agent codex needs the codex command, which is not on PATH"},
		{[]string{"--agent", "gemini"}, "--agent gemini needs the gemini command, which is not on PATH"},
		{[]string{"--agent", "exec:./no-such-agent.sh"}, "which does not exist"},
		{[]string{"--agent", "exec:./plain.sh"}, "which is not executable"},
		{[]string{"--agent", "exec:no-such-agent-xyz"}, "not a command on PATH"},
	} {
		dir := t.TempDir()
		writeTasks(t, dir, "one", "two")
		os.WriteFile(filepath.Join(dir, "plain.sh"), []byte("#!/bin/sh\n"), 0o644)
		before, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		env := cleanEnv(t, "PATH="+bin)
		r := ralph(t, dir, env, nil, append([]string{"run", "-y"}, c.args...)...)
		after, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
			!strings.HasPrefix(r.stderr, "ralph: ") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", c.args, r.code, r.stdout, r.stderr)
		}
		if string(after) != string(before) {
			t.Errorf("%v: RALPH_TASKS.md changed:\n%s", c.args, after)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, ".ralph", "sessions")); len(entries) != 0 {
			t.Errorf("%v: a session was started: %v", c.args, entries)
		}
	}

	// resume checks the flags it is given the same way.
	dir := t.TempDir()
	writeTasks(t, dir, "one")
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "run", "--agent", "exec:"+complete); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	writeTasks(t, dir, "one", "two")
	before, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	r := ralph(t, dir, env, nil, "resume", "--max-cost", "-1")
	after, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if r.code != 2 || !strings.Contains(r.stderr, "--max-cost cannot be negative") || string(after) != string(before) {
		t.Fatalf("resume: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, after)
	}
}
