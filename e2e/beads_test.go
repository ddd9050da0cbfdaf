package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/beads"
)

// These tests drive Beads' real bd (1.3.0, built by .ci/run from the Go
// module proxy's source), never a stand-in: what they show of ralph run
// --tracker beads is what a person with bd gets.

// needBd is the real bd's path: e2e/setup.sh builds it once into its
// cache, and a missing bd fails the test.
func needBd(t testing.TB) string {
	t.Helper()
	return needTool(t, "bd", "Beads, built from the Go module proxy")
}

// beadsEnv is the environment of ralph and bd in a Beads test: bd on
// PATH, and a Beads database where BEADS_DIR says, when it says.
func beadsEnv(t testing.TB, bd string, extra ...string) []string {
	// No usage metrics leave a test machine.
	env := cleanEnv(t, append(personGit, "BD_DISABLE_METRICS=1")...)
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + filepath.Dir(bd) + string(os.PathListSeparator) + v
		}
	}
	return append(env, extra...)
}

// beadsRunLimit is how long a ralph run that works tasks through the real
// bd may take: every bd command opens its embedded database (over half a
// second of CPU), ralph runs about ten per task, and in the whole suite
// under the race detector on two busy cores a three-task run has taken
// more than four minutes without being stuck.
const beadsRunLimit = 10 * time.Minute

// beadsRun is ralph run (or plan) through the real bd: ralph, within
// beadsRunLimit.
func beadsRun(t testing.TB, dir string, env []string, args ...string) runResult {
	t.Helper()
	return ralphWithin(t, beadsRunLimit, ralphBin, dir, env, nil, args...)
}

// bdIn runs the real bd in dir with --json and returns its stdout.
func bdIn(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bd", append(args, "--json")...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bd %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// bdIssues runs bd and reads its issues.
func bdIssues(t testing.TB, dir string, env []string, args ...string) []beads.Issue {
	t.Helper()
	out := bdIn(t, dir, env, args...)
	is, err := beads.Parse([]byte(out))
	if err != nil {
		t.Fatalf("bd %s printed %q: %v", strings.Join(args, " "), out, err)
	}
	return is
}

// bdShow is one issue as bd show has it now.
func bdShow(t testing.TB, dir string, env []string, id string) beads.Issue {
	t.Helper()
	is := bdIssues(t, dir, env, "show", id)
	if len(is) != 1 {
		t.Fatalf("bd show %s: %d issues", id, len(is))
	}
	return is[0]
}

// beadsEpic makes a Beads database in dir (bd init) and an epic with a
// task per title under it; deps maps a task's index to the index of the
// task it depends on. It returns the epic's id and the tasks' ids.
func beadsEpic(t testing.TB, dir string, env []string, titles []string, priorities []int, deps map[int]int) (string, []string) {
	t.Helper()
	bdInit(t, dir, env)
	epic := bdIssues(t, dir, env, "create", "the feature", "--type", "epic")[0].ID
	var ids []string
	for i, title := range titles {
		is := bdIssues(t, dir, env, "create", title, "--type", "task", "--parent", epic, "--priority", strconv.Itoa(priorities[i]))
		ids = append(ids, is[0].ID)
	}
	for from, to := range deps {
		bdIn(t, dir, env, "dep", "add", ids[from], ids[to])
	}
	return epic, ids
}

// bdInit makes a Beads database in dir.
func bdInit(t testing.TB, dir string, env []string) {
	t.Helper()
	cmd := exec.Command("bd", "init", "--quiet", "--prefix", "rt", "--skip-hooks", "--skip-agents", "--non-interactive")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bd init: %v\n%s", err, out)
	}
}

// TestBeadsEpicWorkedInDependencyOrder: ralph run --tracker beads --epic E
// works the epic's three tasks through the real bd: the most urgent first,
// except that the one depending on another waits for it, each claimed and
// then closed in bd with a reason naming its commit and its cost.
func TestBeadsEpicWorkedInDependencyOrder(t *testing.T) {
	t.Parallel()
	bd := needBd(t)
	dir := gitProjectDir(t)
	env := beadsEnv(t, bd)
	// "reads" is the most urgent but depends on "schema", the least.
	epic, ids := beadsEpic(t, dir, env, []string{"schema", "writes", "reads"}, []int{3, 2, 0}, map[int]int{2: 0})
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	r := beadsRun(t, dir, env, "--base-url", srv.URL, "-y", "run", "--tracker", "beads", "--epic", epic, "--commit")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "writes\nschema\nreads\n" {
		t.Fatalf("done.log (the order the tasks were worked in):\n%s", done)
	}
	commits := strings.Fields(shIn(t, dir, "git log --format=%h --abbrev=12 -3"))
	if len(commits) != 3 {
		t.Fatalf("commits: %v", commits)
	}
	// Newest first: reads, schema, writes.
	for i, id := range []string{ids[2], ids[0], ids[1]} {
		is := bdShow(t, dir, env, id)
		if is.Status != beads.StatusClosed {
			t.Errorf("%s (%s) is %s in bd, not closed", id, is.Title, is.Status)
		}
		if !strings.Contains(is.CloseReason, commits[i]) || !strings.Contains(is.CloseReason, "Tokens for this task") {
			t.Errorf("%s (%s) closed with %q, which names neither its commit %s nor its cost", id, is.Title, is.CloseReason, commits[i])
		}
	}
	// ralph plans lists the epic, done.
	if p := ralph(t, dir, env, nil, "plans"); p.code != 0 || !strings.Contains(p.stdout, "beads:"+epic) {
		t.Errorf("ralph plans: exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
}

// TestBeadsTwoRalphsNeverTakeTheSameTask: two ralphs in two projects
// sharing one Beads database (BEADS_DIR) work the same epic at once; bd's
// atomic claim gives each task to one of them, so each is worked once.
func TestBeadsTwoRalphsNeverTakeTheSameTask(t *testing.T) {
	t.Parallel()
	bd := needBd(t)
	shared := t.TempDir()
	env := beadsEnv(t, bd, "BEADS_DIR="+filepath.Join(shared, ".beads"))
	titles := []string{"one", "two", "three", "four", "five", "six"}
	epic, ids := beadsEpic(t, shared, env, titles, []int{2, 2, 2, 2, 2, 2}, nil)
	log := filepath.Join(shared, "worked.log")
	agent := filepath.Join(shared, "agent.sh")
	mustWrite(t, agent, `#!/usr/bin/env bash
prompt=$(cat)
title=$(printf '%s\n' "$prompt" | sed -n 's/^Your task ([^)]*): //p' | head -n 1)
printf '%s %s\n' "$title" "$PWD" >> `+log+`
sleep 0.5
echo "<promise>COMPLETE</promise>"
`)
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	type run struct {
		cmd      *exec.Cmd
		out, err lockedBuffer
	}
	var runs []*run
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(shared, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r := &run{cmd: exec.Command(ralphBin, "run", "--tracker", "beads", "--epic", epic, "--agent", "exec:"+agent)}
		r.cmd.Dir, r.cmd.Env = dir, env
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	// Each ralph may work the whole epic, through bd calls that take
	// seconds each on a machine the parallel suite loads (about 90 s in
	// all with the machine to itself; one CI run hit 8 minutes while still
	// working): twice the bound of one Beads run catches a hang without
	// failing a slow machine.
	limit := 2 * beadsRunLimit
	for _, r := range runs {
		done := make(chan error, 1)
		go func() { done <- r.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(limit):
			_ = r.cmd.Process.Kill()
			t.Fatalf("a ralph still ran after %s\nits stdout:\n%s\nits stderr:\n%s", limit, r.out.String(), r.err.String())
		}
	}
	worked := readFileT(t, log)
	for _, title := range titles {
		if n := strings.Count(worked, title+" "); n != 1 {
			t.Errorf("%q was worked %d times:\n%s\na: %s\nb: %s", title, n, worked, runs[0].err.String(), runs[1].err.String())
		}
	}
	for _, id := range ids {
		if is := bdShow(t, shared, env, id); is.Status != beads.StatusClosed {
			t.Errorf("%s (%s) is %s, not closed\n%s\n%s", id, is.Title, is.Status, runs[0].err.String(), runs[1].err.String())
		}
	}
	t.Logf("tasks worked by a: %d, by b: %d", strings.Count(worked, filepath.Join(shared, "a")), strings.Count(worked, filepath.Join(shared, "b")))
}

// TestBeadsKilledMidTaskIsClaimableAfterRecovery: a ralph killed with
// SIGKILL while it works a task leaves the task claimed in bd by itself;
// the next ralph in the project, on recovery, releases its own stale
// claim, so bd lists the task as ready again, and a run then works it.
func TestBeadsKilledMidTaskIsClaimableAfterRecovery(t *testing.T) {
	t.Parallel()
	bd := needBd(t)
	dir := gitProjectDir(t)
	env := beadsEnv(t, bd)
	epic, ids := beadsEpic(t, dir, env, []string{"slow"}, []int{2}, nil)
	agent := filepath.Join(dir, "agent.sh")
	// The agent waits while hold exists, recording its pid to be killed.
	mustWrite(t, agent, `#!/usr/bin/env bash
cat > /dev/null
echo $$ > agent.pid
while [ -e hold ]; do sleep 0.05; done
echo slow >> done.log
echo "<promise>COMPLETE</promise>"
`)
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "hold"), "")
	cmd := exec.Command(ralphBin, "run", "--tracker", "beads", "--epic", epic, "--agent", "exec:"+agent)
	cmd.Dir, cmd.Env = dir, env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to start", beadsRunLimit, func() bool {
		_, err := os.Stat(filepath.Join(dir, "agent.pid"))
		return err == nil
	})
	_ = cmd.Process.Kill() // SIGKILL
	_ = cmd.Wait()
	if pid, err := strconv.Atoi(strings.TrimSpace(readFileT(t, filepath.Join(dir, "agent.pid")))); err == nil {
		if agent, err := os.FindProcess(pid); err == nil {
			_ = agent.Kill()
		}
	}
	is := bdShow(t, dir, env, ids[0])
	if is.Status != beads.StatusInProgress || !strings.HasPrefix(is.Assignee, "ralph:") {
		t.Fatalf("after the kill the task is %s, assigned to %q; want claimed by ralph\n%s", is.Status, is.Assignee, errb.String())
	}
	if ready := bdIssues(t, dir, env, "ready", "--parent", epic); len(ready) != 0 {
		t.Fatalf("a claimed task is ready: %v", ready)
	}
	// Any ralph that takes the project's lock recovers it: a one-shot.
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-p", "hello"); r.code != 0 {
		t.Fatalf("the one-shot: exit %d\n%s", r.code, r.stderr)
	}
	is = bdShow(t, dir, env, ids[0])
	if is.Status != beads.StatusOpen || is.Assignee != "" {
		t.Fatalf("after recovery the task is %s, assigned to %q; want open and unassigned", is.Status, is.Assignee)
	}
	if ready := bdIssues(t, dir, env, "ready", "--parent", epic); len(ready) != 1 || ready[0].ID != ids[0] {
		t.Fatalf("after recovery bd ready lists %v, want %s", ready, ids[0])
	}
	// And a run works it to the end.
	if err := os.Remove(filepath.Join(dir, "hold")); err != nil {
		t.Fatal(err)
	}
	if r := beadsRun(t, dir, env, "run", "--tracker", "beads", "--epic", epic, "--agent", "exec:"+agent); r.code != 0 {
		t.Fatalf("the run after recovery: exit %d\n%s", r.code, r.stderr)
	}
	if is := bdShow(t, dir, env, ids[0]); is.Status != beads.StatusClosed {
		t.Fatalf("after the run the task is %s", is.Status)
	}
}

// TestBeadsMissingIsExit2InOneSentence: without bd on PATH, or without a
// Beads database, ralph run --tracker beads is bad input (exit 2) said in
// one sentence, before any session is recorded.
func TestBeadsMissingIsExit2InOneSentence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t, "PATH=/usr/bin:/bin")
	if _, err := exec.LookPath("/usr/bin/bd"); err == nil {
		t.Skip("bd is installed in /usr/bin")
	}
	r := ralph(t, dir, env, nil, "--base-url", "http://127.0.0.1:1/v1", "run", "--tracker", "beads")
	exit2(t, r, "the bd command")
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "sessions")); err == nil {
		t.Error("a refused run recorded a session")
	}

	bd := needBd(t)
	env = beadsEnv(t, bd)
	r = ralph(t, dir, env, nil, "--base-url", "http://127.0.0.1:1/v1", "run", "--tracker", "beads", "--epic", "rt-1")
	exit2(t, r, "no Beads database")
}

// exit2 checks a run refused as bad input in one sentence naming want.
func exit2(t *testing.T, r runResult, want string) {
	t.Helper()
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	oneSentence(t, r.stderr, want)
}

// TestBeadsPlanWritesAnEpicThatRunCompletes: ralph plan --tracker beads
// writes the plan into bd as an epic with its tasks and the dependency
// between them, leaves the task list as it was, and ralph run works the
// epic in that order.
func TestBeadsPlanWritesAnEpicThatRunCompletes(t *testing.T) {
	t.Parallel()
	bd := needBd(t)
	srv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := beadsEnv(t, bd)
	bdInit(t, dir, env)
	mustWrite(t, filepath.Join(dir, "RALPH_TASKS.md"), personsTasks)
	r := beadsRun(t, dir, env, "--base-url", srv.URL, "--json", "plan", "--tracker", "beads", "add a cache")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct{ Type, Epic string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Type != "plan" || out.Epic == "" {
		t.Fatalf("plan --json: %v\n%s", err, r.stdout)
	}
	if got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); got != personsTasks {
		t.Errorf("the task list changed:\n%s", got)
	}
	tasks := bdIssues(t, dir, env, "list", "--all", "--parent", out.Epic)
	byTitle := map[string]beads.Issue{}
	for _, is := range tasks {
		byTitle[is.Title] = is
	}
	schema, cache := byTitle["define the sqlite schema"], byTitle["put the cache in front of sqlite"]
	if len(tasks) != 2 || schema.ID == "" || cache.ID == "" || !strings.Contains(schema.Description, "Verify: `test -f done.log` passes") {
		t.Fatalf("the epic's tasks: %+v", tasks)
	}
	blocked := false
	for _, d := range cache.Dependencies {
		blocked = blocked || d.Target() == schema.ID && d.Blocks()
	}
	if !blocked {
		t.Fatalf("the cache task does not wait for the schema: %+v", cache.Dependencies)
	}
	if run := beadsRun(t, dir, env, "--base-url", srv.URL, "-y", "run", "--tracker", "beads", "--epic", out.Epic); run.code != 0 {
		t.Fatalf("run: exit %d\n%s", run.code, run.stderr)
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); done != "define the sqlite schema\nput the cache in front of sqlite\n" {
		t.Fatalf("done.log:\n%s", done)
	}
}
