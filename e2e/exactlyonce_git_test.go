//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 89 item 1: committed or merged work was done again after a crash.
// A ralph killed right after a task's `git commit` (--commit), or right
// after its merge moved the branch (--worktrees), had not yet written
// the task's progress entry, and recovery read only the entries: the
// rerun reopened the task, and `git log` showed it twice. A task's commit
// and merge now carry its id and attempt in trailers, and recovery reads
// the branch too. These tests kill ralph there with a git of their own
// first on PATH (outside the project: ralph takes git from PATH once),
// which runs the real git and then SIGKILLs ralph, and run ralph again.

// gitKiller is a git first on PATH that runs the real one, and once, the
// first time a command matching match succeeds, kills the ralph whose pid
// is in its pid file. The kill is sent before git's exit reaches ralph,
// and a SIGKILL leaves it no code to run, so the shim need not wait.
type gitKiller struct {
	path    string // the PATH to give ralph
	pidFile string
	fired   string // made when it killed
}

// newGitKiller writes the shim. match is a bash [[ ]] test of "$sub" (git's
// subcommand) and "$*" (every argument).
func newGitKiller(t *testing.T, match string) *gitKiller {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := &gitKiller{pidFile: filepath.Join(dir, "ralph.pid"), fired: filepath.Join(dir, "fired")}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/bash
sub=
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[i]}" in
	-c|-C) i=$((i + 1)) ;;
	-*) ;;
	*) sub=${args[i]}; break ;;
	esac
done
%q "$@"
rc=$?
if [[ $rc == 0 ]] && %s && mkdir %q 2>/dev/null; then
	kill -KILL "$(cat %q)"
fi
exit $rc
`, real, match, k.fired, k.pidFile)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	k.path = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	return k
}

// run runs ralph in dir with env and args, its pid where the shim reads
// it, until it ends; it reports whether the shim killed it.
func (k *gitKiller) run(t *testing.T, dir string, env []string, args ...string) (bool, string) {
	t.Helper()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env = dir, append(env, "PATH="+k.path)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	timer := time.AfterFunc(ralphRunLimit, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	go func() { _ = cmd.Wait(); close(done) }()
	<-done
	_, err := os.Stat(k.fired)
	return err == nil, stderr.String()
}

// appendModel scripts the task agents: each appends its task's title to
// work-<id>.txt (a file per task, so worktrees' merges never conflict)
// whenever it is asked to work the task, then completes it. asked counts
// those times by task title. hold, when set, is waited on before any task
// but first starts its work, so that only first is under way when ralph
// is killed.
type appendModel struct {
	mu    sync.Mutex
	asked map[string]int
	first string
	hold  chan struct{}
}

func (m *appendModel) answer(r llmtest.RecordedRequest) llmtest.Response {
	msgs := r.Request.Messages
	var id, title string
	for _, msg := range msgs {
		if sm := taskPromptRe.FindStringSubmatch(msg.Content); msg.Role == "user" && sm != nil {
			id, title = sm[1], sm[2]
		}
	}
	if id == "" {
		return llmtest.Response{Text: "nothing to do"}
	}
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch last := msgs[len(msgs)-1]; {
	case last.Role == "user":
		if m.hold != nil && title != m.first {
			select {
			case <-m.hold:
			default:
				// The broken run asks: its answer waits until that ralph
				// is gone, and counts for nothing.
				select {
				case <-m.hold:
				case <-time.After(ralphRunLimit):
				}
				return llmtest.Response{Text: "too late"}
			}
		}
		m.mu.Lock()
		m.asked[title]++
		m.mu.Unlock()
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command",
			Arguments: args(map[string]string{"command": fmt.Sprintf("echo %q >> work-%s.txt", title, id)})}}}
	case last.Role == "tool" && last.Name == "run_command":
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
	}
	return llmtest.Response{Text: "done with " + title}
}

func (m *appendModel) times(title string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked[title]
}

// gitOnceTitles are the tasks of each case.
var gitOnceTitles = []string{"task one", "task two", "task three"}

// checkGitOnce checks a project after the broken run and a normal one:
// every task [x] with one progress entry, its work file in HEAD holding
// its title once, one commit of its title on HEAD's history, and each
// task the model was asked to work once, but redo's, twice.
func checkGitOnce(t *testing.T, dir string, m *appendModel, redo string, stderr string) {
	t.Helper()
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if n := strings.Count(tasks, "- [x] "); n != len(gitOnceTitles) {
		t.Fatalf("%d of %d tasks done:\n%s\n%s", n, len(gitOnceTitles), tasks, stderr)
	}
	progress := readFileT(t, filepath.Join(dir, "RALPH_PROGRESS.md"))
	subjects := shIn(t, dir, "git log --format=%s HEAD")
	for i, title := range gitOnceTitles {
		if n := strings.Count(progress, "— "+title+"\n"); n != 1 {
			t.Errorf("%q has %d progress entries:\n%s", title, n, progress)
		}
		if n := len(regexp.MustCompile("(?m)^"+title+"$").FindAllString(subjects, -1)); n != 1 {
			t.Errorf("%q is %d commits on HEAD:\n%s", title, n, subjects)
		}
		if got := shIn(t, dir, fmt.Sprintf("git show HEAD:work-t%d.txt", i+1)); got != title+"\n" {
			t.Errorf("work-t%d.txt in HEAD holds %q", i+1, got)
		}
		want := 1
		if title == redo {
			want = 2
		}
		if n := m.times(title); n != want {
			t.Errorf("%q was worked %d times, want %d\n%s", title, n, want, stderr)
		}
	}
}

// gitOnceProject is a repository holding gitOnceTitles as its task list,
// and a model for them.
func gitOnceProject(t *testing.T, hold bool) (string, []string, *appendModel) {
	t.Helper()
	dir := gitProjectDir(t)
	writeTasks(t, dir, gitOnceTitles...)
	shIn(t, dir, "git add RALPH_TASKS.md && git commit -qm 'the tasks'")
	m := &appendModel{asked: map[string]int{}, first: gitOnceTitles[0]}
	if hold {
		m.hold = make(chan struct{})
	}
	srv := llmtest.NewServerFunc(m.answer)
	t.Cleanup(srv.Close)
	return dir, append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...), m
}

// TestCommittedTaskIsNotDoneTwice: ralph --commit killed right after a
// task's `git commit`; the next run finds the commit by its trailers,
// writes the task's entry from it, and works the others alone.
func TestCommittedTaskIsNotDoneTwice(t *testing.T) {
	t.Parallel()
	dir, env, m := gitOnceProject(t, false)
	k := newGitKiller(t, `[[ $sub == commit ]]`)
	killed, stderr := k.run(t, dir, env, "-y", "--json", "run", "--commit")
	if !killed {
		t.Fatalf("ralph was never killed after a commit:\n%s", stderr)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(tasks, "- [~] task one") {
		t.Fatalf("the kill was not in the window (task one not in progress):\n%s", tasks)
	}
	r := ralph(t, dir, env, nil, "-y", "--json", "run", "--commit")
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	checkGitOnce(t, dir, m, "", r.stderr)
	if !strings.Contains(readFileT(t, filepath.Join(dir, "RALPH_PROGRESS.md")), "Recovered from commit ") {
		t.Errorf("task one's entry does not say it came from its commit")
	}
}

// TestMergedTaskIsNotDoneTwice: ralph --worktrees --parallel 3 killed
// right after the first task's merge moved the branch (its update-ref),
// the other tasks held before their work; the next run marks the merged
// task done and works the other two once.
func TestMergedTaskIsNotDoneTwice(t *testing.T) {
	t.Parallel()
	dir, env, m := gitOnceProject(t, true)
	k := newGitKiller(t, `[[ $sub == update-ref && $* == *"ralph: merge "* ]]`)
	killed, stderr := k.run(t, dir, env, "-y", "--json", "run", "--worktrees", "--parallel", "3")
	close(m.hold)
	if !killed {
		t.Fatalf("ralph was never killed after a merge:\n%s", stderr)
	}
	r := ralph(t, dir, env, nil, "-y", "--json", "run", "--worktrees", "--parallel", "3")
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	checkGitOnce(t, dir, m, "", r.stderr)
}

// TestUnmergedTaskCommitIsMergedByRecovery: ralph --worktrees killed
// right after a task's commit on its branch, before the merge; recovery
// merges the branch and marks the task done, never working it again.
func TestUnmergedTaskCommitIsMergedByRecovery(t *testing.T) {
	t.Parallel()
	dir, env, m := gitOnceProject(t, true)
	k := newGitKiller(t, `[[ $sub == commit ]]`)
	killed, stderr := k.run(t, dir, env, "-y", "--json", "run", "--worktrees", "--parallel", "3")
	close(m.hold)
	if !killed {
		t.Fatalf("ralph was never killed after a commit:\n%s", stderr)
	}
	if got := shIn(t, dir, "git branch --list 'ralph/*'"); !strings.Contains(got, "ralph/t1") {
		t.Fatalf("no branch of task one:\n%s", got)
	}
	r := ralph(t, dir, env, nil, "-y", "--json", "run", "--worktrees", "--parallel", "3")
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	checkGitOnce(t, dir, m, "", r.stderr)
}

// TestRevertedTaskIsWorkedAgain: a task committed, ralph killed before
// its entry, then its commit reverted (as ralph's undo does, naming it in
// Ralph-Reverts): recovery reads the revert, reopens the task, and the
// next run works it again.
func TestRevertedTaskIsWorkedAgain(t *testing.T) {
	t.Parallel()
	dir, env, m := gitOnceProject(t, false)
	k := newGitKiller(t, `[[ $sub == commit ]]`)
	if killed, stderr := k.run(t, dir, env, "-y", "--json", "run", "--commit"); !killed {
		t.Fatalf("ralph was never killed after a commit:\n%s", stderr)
	}
	c := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
	// The kill came before the person's index learnt the commit.
	shIn(t, dir, "git reset -q && git rm -q work-t1.txt && git commit -qm 'undo task one' -m 'Ralph-Reverts: "+c+"'")
	r := ralph(t, dir, env, nil, "-y", "--json", "run", "--commit")
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if n := strings.Count(tasks, "- [x] "); n != len(gitOnceTitles) || !strings.Contains(tasks, "attempts=2") {
		t.Fatalf("tasks after the revert and a run:\n%s\n%s", tasks, r.stderr)
	}
	if n := m.times("task one"); n != 2 {
		t.Fatalf("the reverted task was worked %d times, want 2", n)
	}
	if got := shIn(t, dir, "git show HEAD:work-t1.txt"); got != "task one\n" {
		t.Errorf("work-t1.txt in HEAD holds %q", got)
	}
	if progress := readFileT(t, filepath.Join(dir, "RALPH_PROGRESS.md")); strings.Count(progress, "— task one\n") != 1 || !strings.Contains(progress, "task=t1 attempt=2 ") {
		t.Errorf("task one's entries:\n%s", progress)
	}
}
