//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The fault sweep (faultsweep_test.go) on a run whose checkpoints take the
// quick way (memory/git/treewrite.go): each task writes its file with the
// file tool, so its checkpoint hashes the file and writes the blob, the
// trees on its path and the commit itself, through ralph's own object
// store, and points the checkpoint's ref at it. A fault in those writes
// (an I/O error or a full disk at the Nth write, link, rename or open of
// a thread) must leave no object cut short, no ref naming an object that
// is not there (git fsck finds the repository whole), and no task done
// twice once a normal run has finished the plan.
//
// The Ns are found, not guessed: a clean run under strace first says at
// which of each thread's calls ralph wrote into .git/objects or
// .git/refs/ralph, and the sweep injects there (threads are scheduled
// differently from run to run, so a fault lands on the store in most
// trials, not all; the counts are logged, and a sweep in which no fault
// landed on the store fails). make test tries up to quickSweepNs Ns of
// each call; RALPH_SWEEP=all every one the clean run showed.

// quickSweepCalls are the calls whose faults the quick run's store meets:
// its objects are written, claimed by a link (a rename where links fail)
// and its refs renamed into place; each file is opened first.
var quickSweepCalls = []string{"write", "linkat", "renameat", "openat"}

// quickSweepFaults are the faults injected.
var quickSweepFaults = []string{"error=EIO", "error=ENOSPC"}

// quickSweepNs is how many of a call's Ns make test tries, spread over
// those the clean run showed.
const quickSweepNs = 6

func TestFaultSweepOfAQuickRun(t *testing.T) {
	t.Parallel()
	needTool(t, "strace", "strace")
	ordinals := storeCalls(t)
	all := os.Getenv("RALPH_SWEEP") == "all"
	var mu sync.Mutex
	trials, onStore := 0, 0
	t.Cleanup(func() {
		t.Logf("%d trials, %d with the fault on ralph's object store or refs", trials, onStore)
		if onStore == 0 {
			t.Errorf("no fault landed on ralph's object store or refs: the sweep tested nothing of it")
		}
	})
	for _, call := range quickSweepCalls {
		ns := ordinals[call]
		if len(ns) == 0 {
			t.Fatalf("a clean quick run made no %s into .git/objects or .git/refs/ralph: the sweep would test nothing", call)
		}
		if !all && len(ns) > quickSweepNs {
			spread := make([]int, quickSweepNs)
			for i := range spread {
				spread[i] = ns[i*(len(ns)-1)/(quickSweepNs-1)]
			}
			ns = slices.Compact(spread)
		}
		for _, fault := range quickSweepFaults {
			t.Run(call+":"+fault, func(t *testing.T) {
				t.Parallel()
				tally := &workTally{}
				srv := llmtest.NewServerFunc(quickWorkModel(tally))
				t.Cleanup(srv.Close)
				env := cleanEnv(t, append([]string{"OPENAI_BASE_URL=" + srv.URL}, personGit...)...)
				landed := 0
				for _, n := range ns {
					tally.reset()
					spec := fmt.Sprintf("%s:%s:when=%d", call, fault, n)
					dir := taskRepo(t, sweepTitles...)
					r := underStrace(t, dir, env, []string{"-q", "-e", "signal=none", "-e", "trace=" + call, "-e", "inject=" + spec}, brokenRun...)
					if !strings.Contains(r.log, "(INJECTED)") {
						continue
					}
					stored := injectedOnStore(r.log)
					if stored {
						landed++
					}
					mu.Lock()
					trials++
					if stored {
						onStore++
					}
					mu.Unlock()
					checkQuickAfterBreak(t, dir, env, tally, spec, r.code, r.stderr)
					_ = os.RemoveAll(dir)
				}
				t.Logf("%s: %d of %d trials broke a call on ralph's object store or refs", call+":"+fault, landed, len(ns))
			})
		}
	}
}

// quickWorkModel works each task with one answer: the task's file
// written whole with the file tool (a path the checkpoint knows) and the
// task completed; tally counts the answers that did the work.
func quickWorkModel(tally *workTally) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		id, title := taskOfRequest(msgs)
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		if msgs[len(msgs)-1].Role == "user" {
			tally.add(title)
			return llmtest.Response{Text: "working", ToolCalls: []llmtest.ToolCall{
				{Name: "write_file", Arguments: args(map[string]string{"path": workFile(id), "content": title + "\n"})},
				{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})},
			}}
		}
		return llmtest.Response{Text: "done with " + title}
	}
}

// storeLine matches a call of strace's log (-f -y) on a file of ralph's
// object store or under its refs: the thread, the call.
var storeLine = regexp.MustCompile(`^(\d+) +(\w+)\(.*\.git/(objects|refs/ralph)/`)

// storeCalls runs a clean quick run under strace and returns, by call,
// the ordinals (each thread's Nth such call) at which ralph's own calls
// went to its store, in order. It also checks that the run took the quick
// way: ralph wrote more objects than the commits (which it writes either
// way), the blobs and trees of the tasks' files.
func storeCalls(t *testing.T) map[string][]int {
	t.Helper()
	tally := &workTally{}
	srv := llmtest.NewServerFunc(quickWorkModel(tally))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, append([]string{"OPENAI_BASE_URL=" + srv.URL}, personGit...)...)
	dir := taskRepo(t, sweepTitles...)
	r := underStrace(t, dir, env, []string{"-q", "-e", "signal=none", "-e", "trace=" + strings.Join(quickSweepCalls, ",")},
		"-y", "--json", "run", "--max-wait", "0")
	if r.code != 0 {
		t.Fatalf("a clean quick run under strace: exit %d\n%s", r.code, r.stderr)
	}
	seen := map[string]int{} // "tid call": calls so far
	found := map[string]map[int]bool{}
	objects := 0
	for _, line := range strings.Split(r.log, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		call, _, ok := strings.Cut(f[1], "(")
		if !ok || !slices.Contains(quickSweepCalls, call) {
			continue
		}
		seen[f[0]+" "+call]++
		if m := storeLine.FindStringSubmatch(line); m != nil {
			if found[call] == nil {
				found[call] = map[int]bool{}
			}
			found[call][seen[f[0]+" "+call]] = true
			if call == "openat" && strings.Contains(line, "tmp_obj_") {
				objects++
			}
		}
	}
	if objects <= len(sweepTitles)+1 {
		t.Fatalf("a clean run of %d tasks wrote %d objects itself: its checkpoints did not take the quick way", len(sweepTitles), objects)
	}
	out := map[string][]int{}
	for call, ns := range found {
		for n := range ns {
			out[call] = append(out[call], n)
		}
		slices.Sort(out[call])
	}
	return out
}

// injectedOnStore reports whether strace's log shows a fault injected
// into a call on ralph's object store or refs.
func injectedOnStore(log string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "(INJECTED)") && storeLine.MatchString(line) {
			return true
		}
	}
	return false
}

// checkQuickAfterBreak checks the repository a broken quick run left, and
// the normal run after it: git fsck finds every object whole and every
// ref's object there, before and after; the normal run finishes the plan
// with one progress entry a task, works no task again whose entry was
// written, and leaves the person's own changes as they were.
func checkQuickAfterBreak(t *testing.T, dir string, env []string, tally *workTally, what string, code int, stderr string) {
	t.Helper()
	broken := func() string { return fmt.Sprintf("\nthe broken run (exit %d):\n%s", code, stderr) }
	checkFsck(t, dir, what+", after the broken run", broken)
	checkStateFilesParse(t, dir)
	progress := readFileOr(filepath.Join(dir, "RALPH_PROGRESS.md"))
	done := map[string]bool{}
	for _, title := range sweepTitles {
		switch n := strings.Count(progress, "— "+title+"\n"); {
		case n > 1:
			t.Fatalf("%s: the broken run wrote %d entries for %q:\n%s%s", what, n, title, progress, broken())
		case n == 1:
			done[title] = true
		}
	}
	worked := tally.snapshot()
	again := ralph(t, dir, env, nil, "-y", "--json", "run", "--max-wait", "0")
	tasks := readFileOr(filepath.Join(dir, "RALPH_TASKS.md"))
	if again.code != 0 {
		t.Fatalf("%s: the next ralph run: exit %d\n%s\n%s%s", what, again.code, again.stderr, tasks, broken())
	}
	if n := strings.Count(tasks, "- [x] "); n != len(sweepTitles) {
		t.Fatalf("%s: %d of %d tasks done:\n%s%s", what, n, len(sweepTitles), tasks, broken())
	}
	progress = readFileOr(filepath.Join(dir, "RALPH_PROGRESS.md"))
	after := tally.snapshot()
	for _, title := range sweepTitles {
		if n := strings.Count(progress, "— "+title+"\n"); n != 1 {
			t.Fatalf("%s: %q has %d progress entries:\n%s%s", what, title, n, progress, broken())
		}
		if done[title] && after[title] != worked[title] {
			t.Fatalf("%s: %q was worked again after its entry was written (%d times, then %d)%s", what, title, worked[title], after[title], broken())
		}
	}
	checkFsck(t, dir, what+", after the next run", broken)
	personsWork(t, dir)
}

// checkFsck fails the test unless git fsck finds dir's repository whole:
// no object corrupt or missing, no ref naming one that is not there.
func checkFsck(t *testing.T, dir, what string, broken func() string) {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--full", "--no-dangling", "--no-progress")
	cmd.Dir, cmd.Env = dir, cleanEnv(t, personGit...)
	out, err := cmd.CombinedOutput()
	if err != nil || fsckTrouble.Match(out) {
		t.Fatalf("%s: git fsck: %v\n%s%s", what, err, out, broken())
	}
}

// fsckTrouble matches what git fsck says of a broken repository.
var fsckTrouble = regexp.MustCompile(`(?i)error|missing|corrupt|broken|bad|invalid`)
