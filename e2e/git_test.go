package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

var personGit = []string{
	"GIT_AUTHOR_NAME=person", "GIT_AUTHOR_EMAIL=person@example.com",
	"GIT_COMMITTER_NAME=person", "GIT_COMMITTER_EMAIL=person@example.com", "GIT_CONFIG_NOSYSTEM=1",
}

// gitProjectDir is a repository with two commits of a.txt's neighbours.
func gitProjectDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, `git init -q -b main && printf 'b1\nb2\n' > b.txt && printf 'c\n' > c.txt && git add . && git commit -qm 'add b and c' &&
		printf 'b1\nb2\nb3\n' > b.txt && git commit -qam 'grow b to three lines'`)
	return dir
}

func shIn(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = cleanEnv(t, personGit...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// writer is a stand-in model whose first turn writes a.txt and edits
// b.txt, then answers.
func writer(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if msgs[len(msgs)-1].Role == "tool" {
			return llmtest.Response{Text: "done"}
		}
		w, _ := json.Marshal(map[string]string{"path": "a.txt", "content": "new file\n"})
		e, _ := json.Marshal(map[string]string{"path": "b.txt", "old_string": "b2\n", "new_string": "B2 changed\n"})
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{
			{ID: "w", Name: "write_file", Arguments: string(w)},
			{ID: "e", Name: "edit_file", Arguments: string(e)},
		}}
	})
	t.Cleanup(srv.Close)
	return srv
}

// personsGitState is what checkpoints and undo must never change: HEAD,
// the index byte for byte, the stash and the branches.
func personsGitState(t *testing.T, dir string) string {
	return shIn(t, dir, "sha256sum .git/index; git rev-parse HEAD; git symbolic-ref HEAD; git stash list; git for-each-ref refs/heads refs/tags")
}

func TestUndoPutsBackTheTurnAndKeepsThePersonsWork(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	// The person's own work in progress: a stash, a staged file, an
	// uncommitted change.
	shIn(t, dir, `printf 'stashed\n' >> c.txt && git stash -q && printf 'staged\n' > staged.txt && git add staged.txt && printf 'mine\n' >> c.txt`)
	before := personsGitState(t, dir)
	srv := writer(t)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--output-format", "stream-json", "write a and edit b")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "b.txt")); got != "b1\nB2 changed\nb3\n" {
		t.Fatalf("b.txt after the turn = %q", got)
	}
	// The stream says which files the turn changed, with line counts.
	var changed map[string]any
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, `"type":"files_changed"`) {
			json.Unmarshal([]byte(line), &changed)
		}
	}
	if changed == nil || changed["text"] != "a.txt (+1 −0), b.txt (+1 −1)" {
		t.Fatalf("files_changed event = %v\n%s", changed, r.stdout)
	}
	// The system prompt carried the repository: the last commit subject
	// and the status lines.
	system := srv.Requests()[0].Request.Messages[0].Content
	for _, want := range []string{"Branch: main", "- grow b to three lines", "A  staged.txt", " M c.txt"} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
	if after := personsGitState(t, dir); after != before {
		t.Fatalf("checkpoints changed the person's git state:\n%s\nwas\n%s", after, before)
	}

	d := ralph(t, dir, env, nil, "diff")
	if d.code != 0 || !strings.Contains(d.stdout, "+B2 changed") || !strings.Contains(d.stdout, "+++ b/a.txt") || strings.Contains(d.stdout, "c.txt") {
		t.Fatalf("ralph diff: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	dj := ralph(t, dir, env, nil, "diff", "--json")
	var diff struct {
		What  string
		Files []struct {
			Path           string
			Added, Deleted int
		}
	}
	if err := json.Unmarshal([]byte(dj.stdout), &diff); err != nil || diff.What != "your last request (step 1)" || len(diff.Files) != 2 {
		t.Fatalf("ralph diff --json: %v %s", err, dj.stdout)
	}

	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 || !strings.Contains(u.stdout, "put back a.txt, b.txt") {
		t.Fatalf("ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Error("a.txt, which the turn created, is still there")
	}
	if got := readFileT(t, filepath.Join(dir, "b.txt")); got != "b1\nb2\nb3\n" {
		t.Errorf("b.txt after undo = %q", got)
	}
	if got := readFileT(t, filepath.Join(dir, "c.txt")); got != "c\nmine\n" {
		t.Errorf("the person's c.txt = %q", got)
	}
	if got := readFileT(t, filepath.Join(dir, "staged.txt")); got != "staged\n" {
		t.Errorf("the person's staged.txt = %q", got)
	}
	if after := personsGitState(t, dir); after != before {
		t.Fatalf("undo changed the person's git state:\n%s\nwas\n%s", after, before)
	}
	// The undo is a checkpoint too: undoing it (the session named, since
	// the project's last change passes over what was undone) puts the
	// turn back.
	u = ralph(t, dir, env, nil, "undo", filepath.Base(sessionDir(t, dir)))
	if u.code != 0 || readFileT(t, filepath.Join(dir, "b.txt")) != "b1\nB2 changed\nb3\n" || readFileT(t, filepath.Join(dir, "a.txt")) != "new file\n" {
		t.Fatalf("undo of the undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
}

func TestUndoNamesAndSkipsAFileChangedSince(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	srv := writer(t)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// The person edits b.txt after the turn.
	shIn(t, dir, `printf 'b1\nB2 changed\nb3\nmy line\n' > b.txt`)
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 1 || !strings.Contains(u.stdout, "skipped b.txt: changed since your last request (step 1)") || !strings.Contains(u.stdout, "put back a.txt") {
		t.Fatalf("ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "b.txt")); got != "b1\nB2 changed\nb3\nmy line\n" {
		t.Fatalf("the person's edit was overwritten: %q", got)
	}
	// --force takes the turn back all the same.
	u = ralph(t, dir, env, nil, "undo", "--step", "1", "--force")
	if u.code != 0 || readFileT(t, filepath.Join(dir, "b.txt")) != "b1\nb2\nb3\n" {
		t.Fatalf("undo --force: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
}

// The unit of undo and diff is the person's request: a one-shot whose
// model took two steps (a.txt written in the first, b.txt changed in the
// second) is taken back whole, and --step reaches one step alone. The
// JSON output and checkpoints.jsonl name both the request and the steps.
func TestUndoTakesBackTheWholeRequest(t *testing.T) {
	t.Parallel()
	twoSteps := func(t *testing.T) (string, []string) {
		dir := gitProjectDir(t)
		env := cleanEnv(t)
		srv := inlineServer(t, toolScenario(t, "two steps", [][]toolCall{
			{{"write_file", `{"path":"a.txt","content":"new file\n"}`}},
			{{"edit_file", `{"path":"b.txt","old_string":"b2","new_string":"B2 changed"}`}},
		}, "done"))
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		return dir, env
	}
	t.Run("the request", func(t *testing.T) {
		dir, env := twoSteps(t)
		log := readFileT(t, filepath.Join(sessionDir(t, dir), "checkpoints.jsonl"))
		if strings.Count(log, `"request":1`) != 2 || !strings.Contains(log, `"turn":2`) {
			t.Fatalf("checkpoints.jsonl does not name the request and both steps:\n%s", log)
		}
		dj := ralph(t, dir, env, nil, "diff", "--json")
		var diff struct {
			What    string
			Request int
			Steps   []int
			Files   []struct{ Path string }
		}
		if err := json.Unmarshal([]byte(dj.stdout), &diff); err != nil || diff.What != "your last request (steps 1-2)" || diff.Request != 1 ||
			len(diff.Steps) != 2 || len(diff.Files) != 2 {
			t.Fatalf("ralph diff --json: %v %s", err, dj.stdout)
		}
		u := ralph(t, dir, env, nil, "undo", "--json")
		var res struct {
			What     string
			Request  int
			Steps    []int
			Restored []string
		}
		if err := json.Unmarshal([]byte(u.stdout), &res); err != nil || u.code != 0 || res.Request != 1 || len(res.Steps) != 2 || len(res.Restored) != 2 {
			t.Fatalf("undo --json: exit %d %v\n%s\n%s", u.code, err, u.stdout, u.stderr)
		}
		if exists(filepath.Join(dir, "a.txt")) || readFileT(t, filepath.Join(dir, "b.txt")) != "b1\nb2\nb3\n" {
			t.Fatal("undo did not take back both steps of the request")
		}
	})
	t.Run("one step", func(t *testing.T) {
		dir, env := twoSteps(t)
		u := ralph(t, dir, env, nil, "undo", "--step", "2")
		if u.code != 0 || !strings.Contains(u.stdout, "undid step 2: put back b.txt") {
			t.Fatalf("undo --step 2: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
		}
		if readFileT(t, filepath.Join(dir, "a.txt")) != "new file\n" || readFileT(t, filepath.Join(dir, "b.txt")) != "b1\nb2\nb3\n" {
			t.Fatal("undo --step 2 took back more or less than step 2")
		}
	})
}

func TestUndoOutsideGitIsOneSentence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t)
	for _, args := range [][]string{{"undo"}, {"diff"}} {
		r := ralph(t, dir, env, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "need a git repository, where ralph keeps its checkpoints") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("ralph %s outside git: exit %d %q", args[0], r.code, r.stderr)
		}
	}
}

// TestDiffWithNothingToShowSaysSo: /diff (and ralph diff) after a request
// that changed nothing says there is nothing to show, in diff's words,
// not undo's "nothing to take back"; /undo keeps its own.
func TestDiffWithNothingToShowSaysSo(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	srv := scenarioServer(t, "chat_hello")
	env := cleanEnv(t, "OPENAI_API_KEY=k")
	r := ralph(t, dir, env, strings.NewReader("hello\n/diff\n/undo\n"), "script", "-", "--keep-going", "--base-url", srv.URL)
	if !strings.Contains(r.stderr, "/diff: nothing to show: ") || strings.Contains(r.stderr, "/diff: nothing to take back") ||
		!strings.Contains(r.stderr, "/undo: nothing to take back: ") {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "diff"); r.code != 2 || !strings.HasPrefix(r.stderr, "ralph: nothing to show: ") {
		t.Fatalf("ralph diff: exit %d %q", r.code, r.stderr)
	}
}

func TestResumedSessionIsToldWhatChangedSinceItsBaseline(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	srv := writer(t)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// While ralph is away the person edits c.txt.
	shIn(t, dir, `printf 'c\nperson was here\n' > c.txt`)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-c", "go on"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Request.Messages
	var prompt string
	for _, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Content, "go on") {
			prompt = m.Content
		}
	}
	for _, want := range []string{"[ralph: the session resumed", "c.txt", "b.txt", "Since this session began"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the resumed prompt lacks %q:\n%s", want, prompt)
		}
	}
}

// A checkpoint that could not be taken is no pass: the work stays on disk
// and the answer is printed, but the run exits 1 saying undo and diff will
// miss it, and --json says is_error.
func TestAFailedCheckpointFailsTheRunAndKeepsTheWork(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	throughGitsIndex(t, dir)
	// A git that cannot make commits: the person's repository may be
	// read-only, full, or damaged.
	realGit := needTool(t, "git", "git")
	bin := t.TempDir()
	// ralph puts -c settings before the subcommand, which the wrapper
	// skips to find it.
	wrapper := "#!/bin/sh\nsub=; skip=\nfor a in \"$@\"; do\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n  case \"$a\" in -c) skip=1;; -*) ;; *) sub=$a; break;; esac\ndone\n" +
		"case \"$sub\" in write-tree|commit-tree|hash-object) echo 'fatal: cannot write objects: disk full' >&2; exit 128;; esac\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := writer(t)
	env := cleanEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b")
	if r.code != 1 || readFileT(t, filepath.Join(dir, "a.txt")) != "new file\n" {
		t.Fatalf("a failed checkpoint: exit %d (want 1, the work kept)\n%s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("the answer was not printed:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "ralph: a git checkpoint could not be recorded, so ralph undo and ralph diff will miss this run's changes") {
		t.Fatalf("stderr does not end with the failed checkpoint:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "ralph: warning: could not record a git checkpoint") || !strings.Contains(r.stderr, "disk full") {
		t.Fatalf("stderr does not warn about the checkpoint:\n%s", r.stderr)
	}
	if n := strings.Count(r.stderr, "could not record a git checkpoint"); n != 1 {
		t.Fatalf("warned %d times", n)
	}
	j := ralph(t, dir, env, nil, "--base-url", writer(t).URL, "--output-format", "json", "write a and edit b")
	if j.code != 1 || !strings.Contains(j.stdout, `"is_error":true`) {
		t.Fatalf("--json of a failed checkpoint: exit %d\n%s", j.code, j.stdout)
	}
}

// Undo names what the model's own git commands did, which it does not
// take back itself: a commit that moved the person's branch and a branch
// created, each with the command that puts it back; --git moves the
// branch back (git reset --soft).
func TestUndoNamesWhatTheModelsGitDid(t *testing.T) {
	t.Parallel()
	for _, moveHead := range []bool{false, true} {
		dir := gitProjectDir(t)
		head := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
		srv := inlineServer(t, commandScenario(t, [][]string{{
			"printf 'new\\n' > a.txt && git add a.txt && git -c user.name=m -c user.email=m@example.invalid commit -qm 'the model commits' && git branch side",
		}}, "done"))
		env := cleanEnv(t)
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--sandbox", "danger-full-access", "commit a file"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		moved := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
		if moved == head {
			t.Fatal("the model's commit did not happen")
		}
		args := []string{"undo"}
		if moveHead {
			args = append(args, "--git")
		}
		u := ralph(t, dir, env, nil, args...)
		if u.code != 0 || !strings.Contains(u.stdout, "put back a.txt") {
			t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
		}
		if !strings.Contains(u.stdout, "not undone: branch side was created; to put it back: git branch -D side") {
			t.Errorf("undo does not name the branch created:\n%s", u.stdout)
		}
		now := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD"))
		if !moveHead {
			if want := "to put it back: git reset --soft " + head; !strings.Contains(u.stdout, "branch main moved from "+head[:12]+" to "+moved[:12]) || !strings.Contains(u.stdout, want) || now != moved {
				t.Errorf("undo does not say how to move main back, or moved it:\n%s", u.stdout)
			}
			continue
		}
		if now != head || !strings.Contains(u.stdout, "put back with git reset --soft "+head) {
			t.Errorf("undo --git did not move main back (HEAD %s, want %s):\n%s", now, head, u.stdout)
		}
		// The commit's git add is taken back too: the person's index is
		// as before, and nothing is left staged or changed.
		if st := shIn(t, dir, "git status --porcelain -- . ':!.ralph'"); st != "" || !strings.Contains(u.stdout, "put back with git read-tree ") {
			t.Errorf("undo --git left the person's git state changed:\n%s\n%s", st, u.stdout)
		}
	}
}

// TestUndoNamesWhatTheModelStaged: a model's git add without a commit
// changes the person's index, which no checkpoint holds; undo names it
// with the command that puts it back, and --git runs that command.
func TestUndoNamesWhatTheModelStaged(t *testing.T) {
	t.Parallel()
	for _, moveIndex := range []bool{false, true} {
		dir := gitProjectDir(t)
		srv := inlineServer(t, commandScenario(t, [][]string{{
			"printf 'new\\n' > a.txt && printf 'changed\\n' > b.txt && git add a.txt b.txt",
		}}, "done"))
		env := cleanEnv(t)
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--sandbox", "danger-full-access", "stage two files"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if st := shIn(t, dir, "git diff --cached --name-only"); st != "a.txt\nb.txt\n" {
			t.Fatalf("the model's git add did not happen: %q", st)
		}
		args := []string{"undo"}
		if moveIndex {
			args = append(args, "--git")
		}
		u := ralph(t, dir, env, nil, args...)
		if u.code != 0 {
			t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
		}
		if !moveIndex {
			_, command, ok := strings.Cut(u.stdout, "the index (what is staged) changed: the model's git add, rm, reset or commit; to put it back: ")
			if !ok {
				t.Fatalf("undo does not name the staged files:\n%s", u.stdout)
			}
			command, _, _ = strings.Cut(command, "\n")
			shIn(t, dir, command)
		}
		if st := shIn(t, dir, "git status --porcelain -- . ':!.ralph'"); st != "" {
			t.Errorf("the person's git state is not as before (--git %v):\n%s\n%s", moveIndex, st, u.stdout)
		}
	}
}

// TestAMarkedFileKeepsANewSessionOffHEAD: a command of an earlier
// session's model marked a file of the person's, with uncommitted work
// in it, assume-unchanged (or skip-worktree), so that git status calls
// the tree clean. A new session took HEAD for its baseline, its model
// edited the file, and undo wrote HEAD's file over the person's work.
// With a mark in the index the baseline is recorded instead. Found by an
// attack; it failed before the fix.
func TestAMarkedFileKeepsANewSessionOffHEAD(t *testing.T) {
	t.Parallel()
	for _, mark := range []string{"--assume-unchanged", "--skip-worktree"} {
		t.Run(mark, func(t *testing.T) {
			t.Parallel()
			dir := gitProjectDir(t)
			shIn(t, dir, `echo "person wip" >> b.txt && git update-index `+mark+` b.txt`)
			if out := shIn(t, dir, "git status --porcelain"); out != "" {
				t.Fatalf("git status does not call the tree clean, so the test proves nothing: %q", out)
			}
			srv := inlineServer(t, `{"name":"edit","responses":[{"tool_calls":[{"name":"edit_file","arguments":"{\"path\":\"b.txt\",\"old_string\":\"b1\",\"new_string\":\"MODEL\"}"}]},{"text":"done"}]}`)
			env := cleanEnv(t)
			if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "edit b"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			u := ralph(t, dir, env, nil, "undo")
			if u.code != 0 {
				t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
			}
			if b := readFileT(t, filepath.Join(dir, "b.txt")); b != "b1\nb2\nb3\nperson wip\n" {
				t.Fatalf("undo left b.txt as %q, not the person's work", b)
			}
		})
	}
}
