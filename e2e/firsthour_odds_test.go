//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestAnalyzeAndHTMLReportAgreeOnTasksDone (issue 68, item 14): ralph
// analyze and ralph report --html count a session's tasks done with one
// function. A run over a task file with a task done by hand ([x]) and one
// a gone ralph left in progress ([~]), then a one-shot whose model marks
// a task done by its title: for each session, analyze's "done" is the
// HTML page's.
func TestAnalyzeAndHTMLReportAgreeOnTasksDone(t *testing.T) {
	t.Parallel()
	child := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if first := msgs[len(msgs)-1]; first.Role == "user" && strings.Contains(first.Content, "mark the notes task done") {
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: `{"id":"write the notes","summary":"written"}`}}}
		}
		if last := msgs[len(msgs)-1]; last.Role == "tool" && last.Name == "complete_task" && !strings.Contains(last.Content, "reported done") {
			return llmtest.Response{Text: "the notes task is done"}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tasks := "# Tasks\n\n- [x] done by hand\n- [~] half done\n- [ ] task three\n- [ ] an impossible task\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "0")
	if r.code != 1 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	agree(t, dir, env, "", 2)

	f, err := os.OpenFile(filepath.Join(dir, "RALPH_TASKS.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- [ ] write the notes\n")
	f.Close()
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "mark the notes task done")
	if r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(string(b), "- [x] write the notes") {
		t.Fatalf("the one-shot did not mark the task:\n%s", b)
	}
	agree(t, dir, env, "", 1)
}

// agree checks that ralph analyze --json and ralph report --html of session
// id ("" for the latest) say the same number of tasks done, and that it is
// want.
func agree(t *testing.T, dir string, env []string, id string, want int) {
	t.Helper()
	args := []string{"analyze", "--json"}
	if id != "" {
		args = append(args, id)
	}
	an := ralph(t, dir, env, nil, args...)
	var a struct {
		Tasks *struct{ Done int } `json:"tasks"`
	}
	if an.code != 0 || json.Unmarshal([]byte(an.stdout), &a) != nil {
		t.Fatalf("analyze: exit %d\n%s\n%s", an.code, an.stdout, an.stderr)
	}
	done := 0
	if a.Tasks != nil {
		done = a.Tasks.Done
	}
	args = []string{"report", "--html"}
	if id != "" {
		args = append(args, id)
	}
	h := ralph(t, dir, env, nil, args...)
	if h.code != 0 {
		t.Fatalf("report --html: exit %d\n%s", h.code, h.stderr)
	}
	page, err := os.ReadFile(strings.TrimSpace(h.stdout))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<b>tasks</b>[^<]*?(\d+) done`).FindSubmatch(page)
	html := 0
	if m != nil {
		html, _ = strconv.Atoi(string(m[1]))
	}
	if done != html || done != want {
		line := regexp.MustCompile(`<b>tasks</b>[^<]*`).Find(page)
		t.Errorf("tasks done: analyze says %d, the HTML report %d (%q); want %d\n%s", done, html, line, want, an.stdout)
	}
}

// TestServeShowsAnUndoneChangeAsUndoneAndStateSavedOnce (issue 68, item
// 14): ralph serve's checkpoint panel marks a request that ralph undo took
// back as undone (with ralph diff --json saying the same), while a request
// still in place is not; and an interrupted session's page says "state
// saved" once, not "state saved state saved".
func TestServeShowsAnUndoneChangeAsUndoneAndStateSavedOnce(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, `git init -q -b main && git add . && git commit -qm start`)
	write := func(path, content string) string {
		b, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return toolScenario(t, "write", [][]toolCall{{{name: "write_file", args: string(b)}}}, "Done.")
	}
	srv := inlineServer(t, write("kept.txt", "kept\n"))
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "write kept.txt"); r.code != 0 {
		t.Fatalf("first one-shot: exit %d\n%s", r.code, r.stderr)
	}
	srv = inlineServer(t, write("undone.txt", "taken back\n"))
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "write undone.txt"); r.code != 0 {
		t.Fatalf("second one-shot: exit %d\n%s", r.code, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "undo"); r.code != 0 {
		t.Fatalf("undo: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "undone.txt")); !os.IsNotExist(err) {
		t.Fatalf("undo left undone.txt: %v", err)
	}
	// An interrupted one-shot: its stop saves the state and says so.
	slow := scenarioServer(t, "slow_stream")
	cmd, out, errb := startRalph(t, dir, env, "--base-url", slow.URL, "--output-format", "stream-json", "talk slowly")
	waitFor(t, "streamed text", 20*time.Second, func() bool { return strings.Count(out.String(), `"type":"text_delta"`) >= 3 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 130 {
		t.Fatalf("the interrupted one-shot: exit %d\n%s", code, errb.String())
	}

	// The sessions by their prompts: two started in one second sort by
	// the random part of their ids.
	ls := ralph(t, dir, env, nil, "sessions", "--json", "--project", dir)
	var listed struct {
		Sessions []struct {
			ID     string `json:"session_id"`
			Prompt string `json:"first_prompt"`
		}
	}
	if err := json.Unmarshal([]byte(ls.stdout), &listed); err != nil {
		t.Fatalf("ralph sessions --json: %v\n%s", err, ls.stdout)
	}
	ids := make([]string, 3)
	for _, s := range listed.Sessions {
		for i, p := range []string{"write kept.txt", "write undone.txt", "talk slowly"} {
			if s.Prompt == p {
				ids[i] = s.ID
			}
		}
	}
	if slices.Contains(ids, "") {
		t.Fatalf("sessions %s, want the three prompts", ls.stdout)
	}
	c, base := startServe(t, dir, env)
	index := getPage(t, c, base+"/")
	page := func(id string) string {
		t.Helper()
		m := regexp.MustCompile(`href="(/s/[^"]+/` + regexp.QuoteMeta(id) + `)"`).FindStringSubmatch(index)
		if m == nil {
			t.Fatalf("the index links no session %s:\n%s", id, index)
		}
		return getPage(t, c, base+m[1])
	}
	kept, undone, stopped := page(ids[0]), page(ids[1]), page(ids[2])
	if !strings.Contains(undone, `<details class="checkpoint undone"`) || !strings.Contains(undone, "an undo took this change back") {
		i := strings.Index(undone, `class="panel checkpoints"`)
		t.Errorf("the undone request's checkpoint is not marked undone:\n%.1500s", undone[max(i, 0):])
	}
	if !strings.Contains(kept, `<details class="checkpoint"`) || strings.Contains(kept, "checkpoint undone") {
		t.Errorf("the request still in place is not shown as in place")
	}
	if strings.Contains(stopped, "state saved state saved") || strings.Count(stopped, "state saved") != 1 {
		t.Errorf("the interrupted session's page says %d times \"state saved\" (doubled: %v)",
			strings.Count(stopped, "state saved"), strings.Contains(stopped, "state saved state saved"))
	}
	d := ralph(t, dir, env, nil, "diff", ids[1], "--request", "1", "--json")
	var diff struct{ Undone bool }
	if d.code != 0 || json.Unmarshal([]byte(d.stdout), &diff) != nil || !diff.Undone {
		t.Errorf("ralph diff --json of the undone session: exit %d, %s", d.code, d.stdout)
	}
	if d := ralph(t, dir, env, nil, "diff", ids[1], "--request", "1"); !strings.Contains(d.stderr, "ralph: undone: an undo took this change back") {
		t.Errorf("ralph diff of the undone session does not say so:\n%s", d.stderr)
	}
}

// TestOneInit (issue 68, item 14): ralph init and chat's /init are one
// init: both create AGENT.md, AGENTS.md (where no instructions file is)
// and the RALPH_* files, said in the same lines, and /init then has the
// model fill AGENTS.md in (issue 92 brought AGENT.md back); after
// ralph init, ralph run names what is missing (a task) rather than the
// file ralph init has just made, and without the file names ralph init.
func TestOneInit(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	cli := t.TempDir()
	r := ralph(t, cli, env, nil, "init")
	if r.code != 0 {
		t.Fatalf("ralph init: exit %d\n%s", r.code, r.stderr)
	}
	chat := t.TempDir()
	url := initScenario(t, "AGENTS.md", "# Agents\n\nBuild: go build ./...\n")
	c := ralph(t, chat, env, strings.NewReader("/init\n"), "chat", "--base-url", url, "-y")
	if c.code != 0 {
		t.Fatalf("/init: exit %d\n%s\n%s", c.code, c.stdout, c.stderr)
	}
	var said []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if line == "" || strings.Contains(line, ".ralph/") {
			// The chat made .ralph/ before /init ran: its .gitignore is kept.
			continue
		}
		said = append(said, line)
		if !strings.Contains(c.stdout+c.stderr, "/init: "+line) {
			t.Errorf("/init does not say %q as ralph init does:\n%s%s", line, c.stdout, c.stderr)
		}
	}
	if !slices.Contains(said, "created  AGENTS.md") || !slices.Contains(said, "created  AGENT.md") {
		t.Errorf("ralph init did not create AGENT.md and AGENTS.md:\n%s", r.stdout)
	}
	for _, dir := range []string{cli, chat} {
		for _, name := range []string{"AGENT.md", "AGENTS.md", "RALPH_GOALS.md", "RALPH_TASKS.md", "RALPH_PROGRESS.md", "RALPH_TODO.md"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if got := readFileT(t, filepath.Join(chat, "AGENTS.md")); !strings.Contains(got, "Build: go build") {
		t.Errorf("/init's model did not fill AGENTS.md in: %q", got)
	}

	run := ralph(t, cli, env, nil, "--base-url", url, "-y", "run")
	if run.code != 2 || !strings.Contains(run.stderr, "RALPH_TASKS.md has no tasks yet") || strings.Contains(run.stderr, "ralph init creates") {
		t.Errorf("ralph run after ralph init: exit %d\n%s", run.code, run.stderr)
	}
	run = ralph(t, t.TempDir(), env, nil, "--base-url", url, "-y", "run")
	if run.code != 2 || !strings.Contains(run.stderr, "there is no such file; `ralph init` creates it") {
		t.Errorf("ralph run without a task file: exit %d\n%s", run.code, run.stderr)
	}
}

// TestBashCompletionWithoutThePackage (issue 68, item 14): the bash
// completion script works in a bash without the bash-completion package
// (bash --norc loads none): it completed nothing there and said
// "_get_comp_words_by_ref: command not found" at every Tab. Its help says
// what it needs.
func TestBashCompletionWithoutThePackage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "completion", "bash")
	if r.code != 0 {
		t.Fatalf("ralph completion bash: exit %d\n%s", r.code, r.stderr)
	}
	script := filepath.Join(dir, "ralph.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Tab as bash makes it: COMP_LINE up to the cursor, its words, and
	// the function complete -p names, which fills COMPREPLY.
	harness := `source "$1"
errs=$2
declare -F _init_completion >/dev/null && { echo "bash-completion is loaded"; exit 3; }
fn=$(complete -p ralph | sed -n 's/.*-F \([^ ]*\) ralph$/\1/p')
tab() {
    COMP_LINE=$1; COMP_POINT=${#COMP_LINE}
    read -r -a COMP_WORDS <<< "$COMP_LINE"
    [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
    "$fn" ralph "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>>"$errs"
    echo "$1|${COMPREPLY[*]}"
}
tab "ralph ana"
tab "ralph --sandbox "
tab "ralph --output-format=stream-j"
`
	errs := filepath.Join(dir, "errors")
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", harness, "harness", script, errs)
	cmd.Dir = dir
	cmd.Env = append(env, "PATH="+filepath.Dir(ralphBin)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	for _, want := range []string{"ralph ana|analyze\n", "ralph --sandbox |read-only workspace-write danger-full-access\n",
		"ralph --output-format=stream-j|stream-json\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("bash without bash-completion: no %q in\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(errs); strings.Contains(string(b), "not found") {
		t.Errorf("the script errs without bash-completion:\n%s", b)
	}
	help := ralph(t, dir, env, nil, "completion", "bash", "--help")
	if !strings.Contains(help.stdout, "works with or without the bash-completion package") {
		t.Errorf("ralph completion bash --help does not say what it needs:\n%s", help.stdout)
	}
}
