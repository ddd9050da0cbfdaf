//go:build linux

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 67's sweep: a fault injected by strace at the Nth call of one kind
// (write, fsync, renameat, openat) of every thread of `ralph run` on five
// tasks — an I/O error, a full disk, or SIGKILL there — and then a normal
// `ralph run`, as a person would start after it. Wherever the fault
// lands, the promise holds: every task ends done once, with one progress
// entry; no task whose entry was written is worked again; every state
// file parses. -b execve leaves the programs ralph starts (git) alone:
// the faults are in ralph's own calls, to its state files, its logs, its
// terminal and the model's connection alike.
//
// make test sweeps a few N (sweepDepths); `make fault-sweep` sets
// RALPH_SWEEP=all and goes on, N by N, until no thread made N calls.

// sweepFaults are the faults of the sweep: strace's inject= actions.
var sweepFaults = []string{"error=EIO", "error=ENOSPC", "signal=KILL"}

// sweepCalls are the system calls the sweep breaks.
var sweepCalls = []string{"write", "fsync", "renameat", "openat"}

// sweepDepths are the N make test tries.
var sweepDepths = []int{1, 4, 16, 64}

// brokenRun is the command line of a sweep's broken `ralph run`.
// --max-wait 0: a full disk stops the run instead of waiting for space.
// --breaker-cooldown 1s: strace injects the fault at the Nth call of
// every thread, and a busy machine's extra threads can fail three
// attempts in a row; the tripped breaker then waited its default five
// minutes, past the trial's four (seen once in a full suite at load).
var brokenRun = []string{"-y", "--json", "run", "--max-wait", "0", "--breaker-cooldown", "1s"}

// sweepTitles are the five tasks of each trial.
var sweepTitles = numbered(5, nil)

func TestFaultSweepOfARun(t *testing.T) {
	t.Parallel()
	needTool(t, "strace", "strace")
	all := os.Getenv("RALPH_SWEEP") == "all"
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	trials, landed := 0, 0
	for _, call := range sweepCalls {
		for _, fault := range sweepFaults {
			t.Run(call+":"+fault, func(t *testing.T) {
				t.Parallel()
				env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
				for i := 0; ; i++ {
					n := 0
					switch {
					case all:
						n = i + 1
					case i < len(sweepDepths):
						n = sweepDepths[i]
					}
					if n == 0 {
						break
					}
					spec := fmt.Sprintf("%s:%s:when=%d", call, fault, n)
					hit := sweepTrial(t, env, call, spec)
					mu.Lock()
					trials++
					if hit {
						landed++
					}
					mu.Unlock()
					if !hit && n == 1 {
						t.Fatalf("%s: nothing injected, so the sweep tests nothing", spec)
					}
					if !hit {
						break // no thread made n such calls
					}
				}
			})
		}
	}
	t.Cleanup(func() { t.Logf("%d trials, %d with the fault injected", trials, landed) })
}

// sweepTrial runs one broken `ralph run` and the normal one after it, and
// checks the promise; it returns whether the fault was injected.
func sweepTrial(t *testing.T, env []string, call, spec string) bool {
	t.Helper()
	dir := t.TempDir()
	writeTasks(t, dir, sweepTitles...)
	r := underStrace(t, dir, env, []string{"-q", "-e", "signal=none", "-e", "trace=" + call, "-e", "inject=" + spec}, brokenRun...)
	hit := r.killed || strings.Contains(r.log, "(INJECTED)")
	if !hit {
		return false
	}
	checkAfterBreak(t, dir, env, spec, r.code, r.stderr)
	return true
}

// checkAfterBreak checks a project a broken `ralph run` of sweepTitles
// left (its exit code and stderr, for the failure's message), and the
// normal `ralph run` after it: every state file parses; the broken run
// wrote no entry twice; the next one ends with every task done, with one
// entry each, and works no task again whose entry was written.
func checkAfterBreak(t *testing.T, dir string, env []string, what string, code int, stderr string) {
	t.Helper()
	checkStateFilesParse(t, dir)
	work := countLines(filepath.Join(dir, "work.log"))
	entries := map[string]int{}
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	for _, title := range sweepTitles {
		if entries[title] = strings.Count(string(progress), "— "+title+"\n"); entries[title] > 1 {
			t.Fatalf("%s: the broken run wrote %d entries for %q:\n%s", what, entries[title], title, progress)
		}
	}

	again := ralph(t, dir, env, nil, "-y", "--json", "run", "--max-wait", "0")
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if again.code != 0 {
		t.Fatalf("%s: the next ralph run: exit %d\n%s\n%s\nthe broken run (exit %d):\n%s", what, again.code, again.stderr, tasks, code, stderr)
	}
	checkStateFilesParse(t, dir)
	if n := strings.Count(string(tasks), "- [x] "); n != len(sweepTitles) {
		t.Fatalf("%s: %d of %d tasks done:\n%s", what, n, len(sweepTitles), tasks)
	}
	after := countLines(filepath.Join(dir, "work.log"))
	progress, _ = os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	for _, title := range sweepTitles {
		if n := strings.Count(string(progress), "— "+title+"\n"); n != 1 {
			t.Fatalf("%s: %q has %d progress entries:\n%s\nthe broken run (exit %d):\n%s", what, title, n, progress, code, stderr)
		}
		if entries[title] == 1 && after[title] != work[title] {
			t.Fatalf("%s: %q was worked again after its entry was written (%d times, then %d)\nthe broken run (exit %d):\n%s", what, title, work[title], after[title], code, stderr)
		}
	}
}

// countLines counts each line of the file at path.
func countLines(path string) map[string]int {
	data, _ := os.ReadFile(path)
	n := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if l != "" {
			n[l]++
		}
	}
	return n
}

// TestKilledRunsDoNothingTwice is the SIGKILL sweep of issues 67 and 89:
// `ralph run` of five tasks killed at a random moment, then a normal run,
// in each of killModes: plain, --commit, and --parallel 3 --worktrees in
// a repository holding the person's own work in progress. The promise
// holds after every kill (checkAfterBreak, checkGitAfterBreak). Plain
// runs are killed between 5 and 500 ms; a git mode's between 5 ms and
// the length of a clean run of it, measured first. make test kills each
// mode killMode.kills times; RALPH_KILLS sets the plain mode's count and,
// unless RALPH_GIT_KILLS sets theirs, the git modes' (`make kill-sweep`:
// 1,000 and 100).
func TestKilledRunsDoNothingTwice(t *testing.T) {
	t.Parallel()
	for _, m := range killModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			kills := m.kills
			for _, knob := range []string{"RALPH_KILLS", "RALPH_GIT_KILLS"} {
				if n, err := strconv.Atoi(os.Getenv(knob)); err == nil && n > 0 && (knob == "RALPH_KILLS" || m.git) {
					kills = n
				}
			}
			if m.git {
				killGitRuns(t, m, kills)
				return
			}
			killPlainRuns(t, kills)
		})
	}
}

// killPlainRuns is the plain mode's sweep: kills runs, each killed
// between 5 and 500 ms.
func killPlainRuns(t *testing.T, kills int) {
	t.Helper()
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 67))
	killed := 0
	for i := range kills {
		dir := t.TempDir()
		writeTasks(t, dir, sweepTitles...)
		after := time.Duration(5+rng.IntN(496)) * time.Millisecond
		stderr, ok := killAfter(t, dir, env, killModes[0], after)
		if !ok {
			continue
		}
		killed++
		checkAfterBreak(t, dir, env, fmt.Sprintf("kill %d after %s", i+1, after), -1, stderr)
		_ = os.RemoveAll(dir)
	}
	t.Logf("%d runs, %d killed before they ended: no task done twice, no entry lost", kills, killed)
}

// killGitRuns is a git mode's sweep: a clean run measured, then kills
// runs, each killed between 5 ms and the clean run's length.
func killGitRuns(t *testing.T, m killMode, kills int) {
	t.Helper()
	tally := &workTally{}
	srv := llmtest.NewServerFunc(fileWorkModel(tally))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, append([]string{"OPENAI_BASE_URL=" + srv.URL}, personGit...)...)
	dir, start := sweepRepo(t)
	clean := ralph(t, dir, env, nil, m.runArgs()...)
	if clean.code != 0 {
		t.Fatalf("a clean run: exit %d\n%s", clean.code, clean.stderr)
	}
	for title, n := range readGitState(t, dir, start).commits {
		if n != 1 {
			t.Fatalf("a clean run committed %q's work %d times:\n%s", title, n, gitLog(t, dir, start))
		}
	}
	checkGitTidy(t, dir, "a clean run")
	span := max(int(clean.dur/time.Millisecond), 50)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 89))
	killed := 0
	for i := range kills {
		tally.reset()
		dir, start := sweepRepo(t)
		after := time.Duration(5+rng.IntN(span-4)) * time.Millisecond
		stderr, ok := killAfter(t, dir, env, m, after)
		if !ok {
			continue
		}
		killed++
		checkGitAfterBreak(t, m, dir, start, env, tally, fmt.Sprintf("kill %d after %s", i+1, after), -1, stderr)
		_ = os.RemoveAll(dir)
	}
	t.Logf("%d runs, %d killed before they ended (a clean run takes %s): no task done twice, no entry lost, git as the person left it",
		kills, killed, clean.dur.Round(time.Millisecond))
}

// killAfter starts `ralph run` of the mode in dir and SIGKILLs it after
// the given time; it returns what ralph wrote to stderr, and false when
// the run ended before the kill.
func killAfter(t *testing.T, dir string, env []string, m killMode, after time.Duration) (string, bool) {
	t.Helper()
	cmd := exec.Command(ralphBin, m.runArgs()...)
	cmd.Dir, cmd.Env = dir, env
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(after, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	_ = cmd.Wait()
	// Stopped before it fired: the run ended, nothing was broken.
	return stderr.String(), !timer.Stop()
}
