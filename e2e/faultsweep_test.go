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
	// --max-wait 0: a full disk stops the run instead of waiting for space.
	r := underStrace(t, dir, env, []string{"-q", "-e", "signal=none", "-e", "trace=" + call, "-e", "inject=" + spec},
		"-y", "--json", "run", "--max-wait", "0")
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

// TestKilledRunsDoNothingTwice is issue 67's SIGKILL sweep: `ralph run` of
// five tasks killed at a random moment between 5 and 500 ms, then a
// normal run; checkAfterBreak's promise holds after every one. make test
// kills it RALPH_KILLS times (20 by default); `make kill-sweep` 1,000.
func TestKilledRunsDoNothingTwice(t *testing.T) {
	t.Parallel()
	kills := 20
	if n, err := strconv.Atoi(os.Getenv("RALPH_KILLS")); err == nil && n > 0 {
		kills = n
	}
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 67))
	killed := 0
	for i := range kills {
		dir := t.TempDir()
		writeTasks(t, dir, sweepTitles...)
		after := time.Duration(5+rng.IntN(496)) * time.Millisecond
		cmd := exec.Command(ralphBin, "-y", "--json", "run", "--max-wait", "0")
		cmd.Dir, cmd.Env = dir, env
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(after, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		_ = cmd.Wait()
		if timer.Stop() {
			// It ended before the kill: nothing was broken this time.
			continue
		}
		killed++
		checkAfterBreak(t, dir, env, fmt.Sprintf("kill %d after %s", i+1, after), -1, stderr.String())
		_ = os.RemoveAll(dir)
	}
	t.Logf("%d runs, %d killed before they ended: no task done twice, no entry lost", kills, killed)
}
