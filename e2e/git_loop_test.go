package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// fileTaskModel scripts the task loop's children for tasks titled
// "write PATH WORD": each writes WORD and a newline into PATH (with
// write_file; "run PATH WORD" with a sandboxed run_command), then calls
// complete_task. gate, when set, is called before a task's first answer
// and may hold it back.
func fileTaskModel(t *testing.T, gate func(id string)) *llmtest.Server {
	srv := llmtest.NewServerFunc(fileTaskAnswers(gate))
	t.Cleanup(srv.Close)
	return srv
}

// fileTaskAnswers are fileTaskModel's answers, for a model that answers
// some requests its own way first.
func fileTaskAnswers(gate func(id string)) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		var id, title string
		for _, m := range msgs {
			if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				id, title = sm[1], sm[2]
			}
		}
		f := strings.Fields(title)
		if id == "" || len(f) != 3 || f[0] != "write" && f[0] != "run" {
			return llmtest.Response{Text: "nothing to do"}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		last := msgs[len(msgs)-1]
		switch {
		case last.Role == "user":
			if gate != nil {
				gate(id)
			}
			if f[0] == "run" {
				cmd := fmt.Sprintf("mkdir -p $(dirname %s) && echo %s > %s", f[1], f[2], f[1])
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": cmd})}}}
			}
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": f[1], "content": f[2] + "\n"})}}}
		case last.Role == "tool" && (last.Name == "write_file" || last.Name == "run_command"):
			if strings.Contains(last.Content, "sandbox") || strings.Contains(last.Content, "exit status") {
				return llmtest.Response{Text: "failed: " + last.Content}
			}
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "wrote " + f[1]})}}}
		}
		return llmtest.Response{Text: "done: " + title}
	}
}

// taskRepo is a repository whose committed task list is titles, with the
// person's work in progress: c.txt changed and not staged, staged.txt
// staged. base.txt holds one line, "base".
func taskRepo(t *testing.T, titles ...string) string {
	dir := gitProjectDir(t)
	writeTasks(t, dir, titles...)
	shIn(t, dir, `printf 'base\n' > base.txt && git add RALPH_TASKS.md base.txt && git commit -qm 'the tasks' &&
		printf 'mine\n' >> c.txt && printf 'staged\n' > staged.txt && git add staged.txt`)
	return dir
}

// personsWork is what a run must leave of the person's own changes.
func personsWork(t *testing.T, dir string) {
	t.Helper()
	status := shIn(t, dir, "git status --porcelain --untracked-files=no")
	for _, want := range []string{" M c.txt\n", "A  staged.txt\n"} {
		if !strings.Contains(status, want) {
			t.Errorf("the person's change %q is gone from git status:\n%s", strings.TrimSpace(want), status)
		}
	}
	if got := readFileT(t, filepath.Join(dir, "c.txt")); got != "c\nmine\n" {
		t.Errorf("c.txt = %q", got)
	}
}

func TestRunCommitMakesOneCommitPerTask(t *testing.T) {
	t.Parallel()
	titles := []string{"write f1.txt one", "write f2.txt two", "write sub/f3.txt three", "write f4.txt four", "write base.txt changed"}
	dir := taskRepo(t, titles...)
	head := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--commit")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	session := resultLine(t, r.stdout)["session_id"].(string)
	log := shIn(t, dir, "git log --reverse --format=%H "+head+"..HEAD")
	commits := strings.Fields(log)
	if len(commits) != 5 {
		t.Fatalf("%d commits, want 5:\n%s", len(commits), shIn(t, dir, "git log --oneline"))
	}
	files := []string{"f1.txt", "f2.txt", "sub/f3.txt", "f4.txt", "base.txt"}
	for i, c := range commits {
		if got := shIn(t, dir, "git show --name-only --format= "+c); got != files[i]+"\n" {
			t.Errorf("commit %d (%s) holds\n%s\nwant only %s", i+1, titles[i], got, files[i])
		}
		msg := shIn(t, dir, "git log -1 --format=%B "+c)
		want := titles[i] + "\n\nwrote " + files[i] + "\n\nRalph-Session: " + session + fmt.Sprintf("\nRalph-Task: t%d\nRalph-Attempt: 1\n\n", i+1)
		if msg != want {
			t.Errorf("commit %d message = %q, want %q", i+1, msg, want)
		}
		if who := shIn(t, dir, "git log -1 --format=%an "+c); who != "person\n" {
			t.Errorf("commit %d author = %q", i+1, who)
		}
	}
	personsWork(t, dir)
	if status := shIn(t, dir, "git status --porcelain"); strings.Contains(status, "f1.txt") || strings.Contains(status, "base.txt") {
		t.Errorf("committed files still show as changes:\n%s", status)
	}
	for i := range titles {
		taskFiles(t, dir, env, fmt.Sprintf("t%d", i+1), files[i])
	}
	noCheckpointErrors(t, dir)
	// The session remembers --commit for resume.
	st := ralph(t, dir, env, nil, "status", "--json")
	if !strings.Contains(st.stdout, `"commit": true`) {
		t.Errorf("session.json lacks commit:\n%s", st.stdout)
	}
}

func TestRunCheckpointsEachTaskForDiffAndUndo(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write f1.txt one", "write f2.txt two")
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)
	before := personsGitState(t, dir)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--output-format", "stream-json", "run")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `"type":"files_changed"`) || !strings.Contains(r.stdout, `"task":"t2"`) {
		t.Errorf("no files_changed event for task t2:\n%s", r.stdout)
	}
	if after := personsGitState(t, dir); after != before {
		t.Fatalf("the run changed the person's git state without --commit:\n%s\nwas\n%s", after, before)
	}
	taskFiles(t, dir, env, "t1", "f1.txt")
	taskFiles(t, dir, env, "t2", "f2.txt")
	noCheckpointErrors(t, dir)
	u := ralph(t, dir, env, nil, "undo", "--task", "t2")
	if u.code != 0 {
		t.Fatalf("ralph undo --task t2: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "f2.txt")); !os.IsNotExist(err) {
		t.Error("f2.txt, which task t2 wrote, is still there")
	}
	if readFileT(t, filepath.Join(dir, "f1.txt")) != "one\n" {
		t.Error("undo of t2 touched t1's file")
	}
	if !strings.Contains(readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")), "- [x] write f2.txt two") {
		t.Error("undo of a task put back the task file")
	}
	personsWork(t, dir)
}

func TestRunCommitRefusals(t *testing.T) {
	t.Parallel()
	env := append(cleanEnv(t), personGit...)
	// Outside git.
	plain := t.TempDir()
	writeTasks(t, plain, "write f1.txt one")
	r := ralph(t, plain, env, nil, "--base-url", "http://127.0.0.1:1/v1", "run", "--commit")
	if r.code != 2 || !strings.Contains(r.stderr, "--commit needs a git repository") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("outside git: exit %d\n%s", r.code, r.stderr)
	}
	// A detached HEAD: refused before any work.
	dir := taskRepo(t, "write f1.txt one")
	shIn(t, dir, "git checkout -q --detach")
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	for _, flag := range []string{"--commit", "--worktrees"} {
		r = ralph(t, dir, env, nil, "--base-url", "http://127.0.0.1:1/v1", "run", flag)
		if r.code != 2 || !strings.Contains(r.stderr, "detached HEAD") {
			t.Fatalf("%s on a detached HEAD: exit %d\n%s", flag, r.code, r.stderr)
		}
	}
	if readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")) != tasks {
		t.Fatal("a refused run touched the task file")
	}
	if _, err := os.Stat(filepath.Join(dir, "f1.txt")); err == nil {
		t.Fatal("a refused run did the task")
	}
}

// waitForTrees waits until n task worktrees exist.
func waitForTrees(dir string, n int) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if list, _ := filepath.Glob(filepath.Join(dir, ".ralph", "worktrees", "*")); len(list) >= n {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func TestRunWorktreesMergesSixTasks(t *testing.T) {
	t.Parallel()
	titles := []string{"write w1.txt one", "write w2.txt two", "run w3.txt three", "write d/w4.txt four", "run w5.txt five", "write w6.txt six"}
	dir := taskRepo(t, titles...)
	env := append(cleanEnv(t), personGit...)
	// The first three tasks wait until all three have their trees and
	// ralph status has shown them.
	statusSeen := make(chan string, 1)
	statusTaken := make(chan struct{})
	srv := fileTaskModel(t, func(id string) {
		switch id {
		case "t1":
			waitForTrees(dir, 3)
			// Each tree is in session.json once its tools are ready,
			// a moment after its directory appears.
			var out string
			for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if out = ralph(t, dir, env, nil, "status").stdout; strings.Count(out, "worker ") == 3 {
					break
				}
			}
			statusSeen <- out
			close(statusTaken)
		case "t2", "t3":
			select {
			case <-statusTaken:
			case <-time.After(30 * time.Second):
			}
		}
	})
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--parallel", "3", "--worktrees")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	status := <-statusSeen
	for _, want := range []string{"worker", "t1 in .ralph/worktrees/t1 (branch ralph/t1)", "t3 in .ralph/worktrees/t3 (branch ralph/t3)"} {
		if !strings.Contains(status, want) {
			t.Errorf("ralph status while running lacks %q:\n%s", want, status)
		}
	}
	for _, title := range titles {
		f := strings.Fields(title)
		if got := readFileT(t, filepath.Join(dir, f[1])); got != f[2]+"\n" {
			t.Errorf("%s = %q after the run", f[1], got)
		}
		if got := shIn(t, dir, "git show HEAD:"+f[1]); got != f[2]+"\n" {
			t.Errorf("%s is not committed on main: %q", f[1], got)
		}
		if n := strings.Count(shIn(t, dir, "git log --format=%s -- "+f[1]), "\n"); n != 1 {
			t.Errorf("%s has %d commits, want 1", f[1], n)
		}
	}
	if got := shIn(t, dir, "git worktree list"); strings.Count(got, "\n") != 1 {
		t.Errorf("git worktree list after the run:\n%s", got)
	}
	if got := shIn(t, dir, "git branch --list 'ralph/*'"); got != "" {
		t.Errorf("merged branches are left:\n%s", got)
	}
	if branch := shIn(t, dir, "git symbolic-ref --short HEAD"); branch != "main\n" {
		t.Errorf("HEAD is on %q", branch)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "worktrees")); !os.IsNotExist(err) {
		t.Errorf(".ralph/worktrees is left: %v", err)
	}
	personsWork(t, dir)
	if status := shIn(t, dir, "git status --porcelain --untracked-files=no"); strings.Contains(status, "w1.txt") {
		t.Errorf("merged files show as changes:\n%s", status)
	}
	// Each task's merge is checkpointed as the task's.
	for i, title := range titles {
		taskFiles(t, dir, env, fmt.Sprintf("t%d", i+1), strings.Fields(title)[1])
	}
	noCheckpointErrors(t, dir)
}

// taskFiles checks that ralph diff --task id names exactly file.
func taskFiles(t *testing.T, dir string, env []string, id, file string) {
	t.Helper()
	d := ralph(t, dir, env, nil, "diff", "--task", id, "--json")
	var diff struct {
		What  string
		Files []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(d.stdout), &diff); err != nil || diff.What != "task "+id || len(diff.Files) != 1 || diff.Files[0].Path != file {
		t.Errorf("ralph diff --task %s: exit %d %v\n%s\n%s", id, d.code, err, d.stdout, d.stderr)
	}
}

// noCheckpointErrors checks that every checkpoint of the run was taken.
func noCheckpointErrors(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "errors.jsonl"))
	for _, l := range logs {
		if data := readFileT(t, l); strings.Contains(data, `"checkpoint"`) {
			t.Errorf("a checkpoint failed:\n%s", data)
		}
	}
}

func TestRunWorktreesConflictKeepsTheBranch(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write base.txt left", "write base.txt right")
	env := append(cleanEnv(t), personGit...)
	// Both tasks branch from the same HEAD before either is merged.
	srv := fileTaskModel(t, func(string) { waitForTrees(dir, 2) })
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--parallel", "2", "--worktrees", "--retries", "3")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a task failed)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	done := regexp.MustCompile(`- \[x\] write base\.txt (left|right)`).FindStringSubmatch(tasks)
	failed := regexp.MustCompile(`- \[!\] write base\.txt (left|right) <!-- ralph:id=(t[12]) conflict=base\.txt branch=(ralph/t[12]) -->`).FindStringSubmatch(tasks)
	if done == nil || failed == nil || done[1] == failed[1] || failed[3] != "ralph/"+failed[2] {
		t.Fatalf("want one task done and the other failed naming base.txt and its branch:\n%s\n%s", tasks, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "base.txt")); got != done[1]+"\n" {
		t.Errorf("base.txt = %q, want the merged task's %q", got, done[1])
	}
	if got := shIn(t, dir, "git show "+failed[3]+":base.txt"); got != failed[1]+"\n" {
		t.Errorf("the kept branch %s holds base.txt = %q", failed[3], got)
	}
	if got := shIn(t, dir, "git branch --list 'ralph/*'"); strings.TrimSpace(got) != failed[3] {
		t.Errorf("branches left: %q, want only %s", got, failed[3])
	}
	if got := shIn(t, dir, "git worktree list"); strings.Count(got, "\n") != 1 {
		t.Errorf("git worktree list after the run:\n%s", got)
	}
	if status := shIn(t, dir, "git status --porcelain --untracked-files=no"); strings.Contains(status, "base.txt") || strings.Contains(status, "UU") {
		t.Errorf("the conflict left the main work tree changed:\n%s", status)
	}
	personsWork(t, dir)
	if !strings.Contains(r.stderr, "conflicts in base.txt; the branch "+failed[3]+" is kept") {
		t.Errorf("ralph does not say which file conflicted:\n%s", r.stderr)
	}
}

func TestRunWorktreesHardStopKeepsUnfinishedWork(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write w1.txt one")
	env := append(cleanEnv(t), personGit...)
	// The child writes its file, then streams slowly until stopped.
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		if last := r.Request.Messages[len(r.Request.Messages)-1]; last.Role == "tool" {
			return llmtest.Response{Text: strings.Repeat("slow ", 200), ChunkSize: 5, ChunkDelayMS: 50}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "w1.txt", "content": "one\n"})}}}
	})
	t.Cleanup(srv.Close)
	cmd, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "run", "--worktrees")
	waitFor(t, "the child's file in its worktree", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, ".ralph", "worktrees", "t1", "w1.txt"))
		return err == nil && srv.Active() == 1
	})
	_ = cmd.Process.Signal(syscall.SIGINT)
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errb.String())
	}
	if got := shIn(t, dir, "git worktree list"); strings.Count(got, "\n") != 1 {
		t.Errorf("git worktree list after the stop:\n%s", got)
	}
	if got := shIn(t, dir, "git show ralph/t1:w1.txt; git log -1 --format=%s ralph/t1"); got != "one\nralph: unfinished work on task t1\n" {
		t.Errorf("the branch ralph/t1 holds %q", got)
	}
	if !strings.Contains(errb.String(), "the unfinished work of task t1 is kept on the branch ralph/t1") {
		t.Errorf("ralph does not say where the work is:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "w1.txt")); !os.IsNotExist(err) {
		t.Error("unfinished work reached the main work tree")
	}
	personsWork(t, dir)
}

// TestRunTaskCheckpointTakesWhatItsFileToolsWrote: a task whose agent only
// wrote files through ralph's file tools is checkpointed by those paths
// alone, with no status over the whole work tree, so a file the person
// wrote meanwhile is not the task's (and undo of the task leaves it); a
// task that ran a command is checkpointed whole.
func TestRunTaskCheckpointTakesWhatItsFileToolsWrote(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write f1.txt one", "run cmd.txt two", "write f3.txt three")
	srv := fileTaskModel(t, func(id string) {
		if id == "t3" {
			// The person's own edit, while the run works on t3.
			if err := os.WriteFile(filepath.Join(dir, "person.txt"), []byte("mine\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	env := append(cleanEnv(t), personGit...)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	taskFiles(t, dir, env, "t1", "f1.txt")
	taskFiles(t, dir, env, "t2", "cmd.txt")
	taskFiles(t, dir, env, "t3", "f3.txt")
	noCheckpointErrors(t, dir)
	u := ralph(t, dir, env, nil, "undo", "--task", "t3")
	if u.code != 0 {
		t.Fatalf("ralph undo --task t3: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "f3.txt")); !os.IsNotExist(err) {
		t.Error("f3.txt, which task t3 wrote, is still there")
	}
	if readFileT(t, filepath.Join(dir, "person.txt")) != "mine\n" {
		t.Error("undo of t3 took the person's file")
	}
}
