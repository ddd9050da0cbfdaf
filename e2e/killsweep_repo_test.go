//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The kill sweeps of issue 89 in git's modes: `ralph run --commit` and
// `ralph run --parallel 3 --worktrees` on five tasks in a repository
// holding the person's own work in progress, killed, then run again as a
// person would. This file is what those sweeps share: the modes, the
// model that works the tasks and counts the work it saw done, and the
// checks after each break (checkGitAfterBreak).

// killMode is one way the kill sweeps run `ralph run`.
type killMode struct {
	name string
	// args are the run's flags after `run`.
	args []string
	// git says the mode needs a repository (sweepRepo).
	git bool
	// kills is how many random kills make test's short form makes.
	kills int
}

// killModes are the modes TestKilledRunsDoNothingTwice sweeps; the git
// ones are also TestKilledAfterEachGitStep's.
var killModes = []killMode{
	{name: "plain", kills: 20},
	{name: "commit", args: []string{"--commit"}, git: true, kills: 10},
	{name: "worktrees", args: []string{"--parallel", "3", "--worktrees"}, git: true, kills: 10},
}

// gitKillModes are killModes' git modes.
func gitKillModes() []killMode {
	var out []killMode
	for _, m := range killModes {
		if m.git {
			out = append(out, m)
		}
	}
	return out
}

// runArgs are the arguments of one `ralph run` of the mode.
func (m killMode) runArgs() []string {
	return append([]string{"-y", "--json", "run", "--max-wait", "0"}, m.args...)
}

// workTally counts, by task title, the attempts the model set to work:
// the answers that ran the task's command. An attempt killed before its
// command ran is counted too, so the tally is at least the attempts that
// did the work (a task's lines in its file): what matters is that it
// never grows for a task whose completion was recorded.
type workTally struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *workTally) add(title string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[string]int{}
	}
	w.n[title]++
}

// snapshot is the tally so far.
func (w *workTally) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.n))
	for k, v := range w.n {
		out[k] = v
	}
	return out
}

// reset forgets the tally: a new trial starts.
func (w *workTally) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n = nil
}

// fileWorkModel is workModel with a file per task: each attempt appends
// its task's title to work-<id>.txt (tasks in parallel worktrees would
// conflict on one shared file when merged), then calls complete_task.
// tally counts the attempts.
func fileWorkModel(tally *workTally) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		id, title := taskOfRequest(msgs)
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch last := msgs[len(msgs)-1]; {
		case last.Role == "user":
			tally.add(title)
			return llmtest.Response{Text: "working", ToolCalls: []llmtest.ToolCall{{Name: "run_command",
				Arguments: args(map[string]string{"command": fmt.Sprintf("echo %q >> %s", title, workFile(id))})}}}
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
		}
		return llmtest.Response{Text: "done with " + title}
	}
}

// workFile is the file the task id's work goes into.
func workFile(id string) string { return "work-" + id + ".txt" }

// sweepRepo is a repository holding sweepTitles committed as the task
// list and the person's work in progress (taskRepo), and the commit the
// run starts from.
func sweepRepo(t *testing.T) (dir, start string) {
	t.Helper()
	dir = taskRepo(t, sweepTitles...)
	return dir, strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
}

// workLines counts each line of the project's work-*.txt files, and says
// which file each title's lines are in.
func workLines(dir string) map[string]int {
	files, _ := filepath.Glob(filepath.Join(dir, "work-*.txt"))
	n := map[string]int{}
	for _, f := range files {
		for l, c := range countLines(f) {
			n[l] += c
		}
	}
	return n
}

// gitState is what a project's repository shows of the sweep's tasks.
type gitState struct {
	// commits counts, by task title, the commits since the start (no
	// merges) that touch the task's work file.
	commits map[string]int
	// others are the commits since the start that touch the person's
	// own files (c.txt, staged.txt): none may.
	others string
}

// readGitState reads the sweep's tasks' commits from the start on.
func readGitState(t *testing.T, dir, start string) gitState {
	t.Helper()
	s := gitState{commits: map[string]int{}}
	for i, title := range sweepTitles {
		log := shIn(t, dir, fmt.Sprintf("git log --no-merges --format=%%H %s..HEAD -- %s", start, workFile(fmt.Sprintf("t%d", i+1))))
		s.commits[title] = len(strings.Fields(log))
	}
	s.others = shIn(t, dir, "git log --no-merges --format='%h %s' "+start+"..HEAD -- c.txt staged.txt")
	return s
}

// checkGitAfterBreak is checkAfterBreak for the git modes: dir is the
// project a broken `ralph run` of the mode left (its exit code and stderr
// for the failure's message), start the commit the run began at, tally
// the model's count of attempts. Before the next run: every state file
// parses, no task has two progress entries or two commits. Then a normal
// run of the mode, after which every task is done once ([x] once, one
// progress entry, one commit of its work), no task whose entry or commit
// the broken run left is worked again, each task's work is in its file at
// least once and no more often than it was started, git's status shows none of
// the tasks' files (the work is committed) and the person's own changes
// as they were, no index.lock is left and no worktree but the main one.
func checkGitAfterBreak(t *testing.T, m killMode, dir, start string, env []string, tally *workTally, what string, code int, stderr string) {
	t.Helper()
	broken := func() string { return fmt.Sprintf("\nthe broken run (exit %d):\n%s", code, stderr) }
	checkStateFilesParse(t, dir)
	progress := readFileOr(filepath.Join(dir, "RALPH_PROGRESS.md"))
	before := readGitState(t, dir, start)
	recorded := map[string]string{}
	for _, title := range sweepTitles {
		entries := strings.Count(progress, "— "+title+"\n")
		switch {
		case entries > 1:
			t.Fatalf("%s: the broken run wrote %d entries for %q:\n%s%s", what, entries, title, progress, broken())
		case before.commits[title] > 1:
			t.Fatalf("%s: the broken run committed %q's work %d times:\n%s%s", what, title, before.commits[title], gitLog(t, dir, start), broken())
		case entries == 1:
			recorded[title] = "its progress entry"
		case before.commits[title] == 1:
			recorded[title] = "its commit"
		}
	}
	worked := tally.snapshot()

	again := ralph(t, dir, env, nil, m.runArgs()...)
	tasks := readFileOr(filepath.Join(dir, "RALPH_TASKS.md"))
	if again.code != 0 {
		t.Fatalf("%s: the next ralph run: exit %d\n%s\n%s%s", what, again.code, again.stderr, tasks, broken())
	}
	checkStateFilesParse(t, dir)
	progress = readFileOr(filepath.Join(dir, "RALPH_PROGRESS.md"))
	after := readGitState(t, dir, start)
	lines := workLines(dir)
	total := tally.snapshot()
	for _, title := range sweepTitles {
		if n := strings.Count(tasks, "- [x] "+title+" "); n != 1 {
			t.Fatalf("%s: %q is marked done %d times:\n%s%s", what, title, n, tasks, broken())
		}
		if n := strings.Count(progress, "— "+title+"\n"); n != 1 {
			t.Fatalf("%s: %q has %d progress entries:\n%s%s", what, title, n, progress, broken())
		}
		if why, ok := recorded[title]; ok && total[title] != worked[title] {
			t.Fatalf("%s: %q was worked again after %s was written (started %d times, then %d)\n%s%s", what, title, why, worked[title], total[title], gitLog(t, dir, start), broken())
		}
		if after.commits[title] != 1 {
			t.Fatalf("%s: %q's work is in %d commits, want 1:\n%s%s", what, title, after.commits[title], gitLog(t, dir, start), broken())
		}
		if lines[title] < 1 || lines[title] > total[title] {
			t.Fatalf("%s: %q's work is %d times in the work tree, started %d times%s", what, title, lines[title], total[title], broken())
		}
	}
	if after.others != "" {
		t.Fatalf("%s: the run committed the person's own files:\n%s%s", what, after.others, broken())
	}
	checkGitTidy(t, dir, what+broken())
}

// checkGitTidy checks what git shows of a project after the normal run:
// no task's file among the changes, the person's own changes as they
// were (c.txt changed and not staged, staged.txt staged), no index.lock,
// no worktree but the main one.
func checkGitTidy(t *testing.T, dir, what string) {
	t.Helper()
	status := shIn(t, dir, "git status --porcelain")
	if strings.Contains(status, "work-") {
		t.Fatalf("%s: the tasks' work shows as changes:\n%s", what, status)
	}
	for _, want := range []string{" M c.txt\n", "A  staged.txt\n"} {
		if !strings.Contains(status, want) {
			t.Fatalf("%s: the person's change %q is gone from git status:\n%s", what, strings.TrimSpace(want), status)
		}
	}
	if got := readFileOr(filepath.Join(dir, "c.txt")); got != "c\nmine\n" {
		t.Fatalf("%s: the person's c.txt = %q", what, got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Fatalf("%s: .git/index.lock is left", what)
	}
	if got := shIn(t, dir, "git worktree list"); strings.Count(got, "\n") != 1 {
		t.Fatalf("%s: git worktree list after the normal run:\n%s", what, got)
	}
}

// gitLog is the project's history since start, for a failure's message.
func gitLog(t *testing.T, dir, start string) string {
	return shIn(t, dir, "git log --format='%h %p %s' --name-only "+start+"..HEAD")
}

// readFileOr is the file's text, or "" when it cannot be read.
func readFileOr(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
