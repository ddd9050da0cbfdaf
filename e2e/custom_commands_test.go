package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Custom commands as Claude Code and codex keep them: a project command
// in a folder of .claude/commands with $1 and $2, and a codex prompt in
// ~/.codex/prompts, reach the model with their arguments in place and
// their front matter left out, and /help lists them with their hints.
func TestChatCustomCommandsWithArgumentsAndFolders(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"custom-args","loop":true,"responses":[{"text":"ok"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "CODEX_HOME=")
	var home string
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	for path, body := range map[string]string{
		filepath.Join(dir, ".claude/commands/issues/fix-issue.md"): "---\ndescription: Fix a numbered issue\nargument-hint: [number] [priority]\n---\nFix issue #$1 at priority $2, following our conventions.\n",
		filepath.Join(home, ".codex/prompts/draftpr.md"):           "---\ndescription: Draft a pull request\n---\nDraft a pull request for branch $1.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := ralph(t, dir, env, strings.NewReader("/help\n/fix-issue 123 \"very high\"\n/draftpr feature-x\n"), "chat", "--base-url", srv.URL)
	out := r.stdout + r.stderr
	for _, want := range []string{"/fix-issue [number] [priority]", "Fix a numbered issue", "/draftpr", "Draft a pull request"} {
		if !strings.Contains(out, want) {
			t.Errorf("/help lacks %q:\n%s", want, out)
		}
	}
	var bodies []string
	for _, req := range srv.Requests() {
		bodies = append(bodies, string(req.Body))
	}
	all := strings.Join(bodies, "\n")
	for _, want := range []string{"Fix issue #123 at priority very high, following our conventions.", "Draft a pull request for branch feature-x."} {
		if !strings.Contains(all, want) {
			t.Errorf("the model did not get %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "argument-hint") || strings.Contains(all, "description: Draft") {
		t.Errorf("front matter reached the model:\n%s", all)
	}
}

// TestCustomCommandInScriptAndOneShot: a custom command runs as a step
// of a script and as a one-shot's prompt, with its arguments, the
// project file it mentions with @ embedded, and its model for that turn
// only; a built-in's name in a one-shot stays a message.
func TestCustomCommandInScriptAndOneShot(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "ok"} })
	dir := t.TempDir()
	env := cleanEnv(t, "CODEX_HOME=", "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=session-model")
	mustWrite(t, filepath.Join(dir, "CONVENTIONS.md"), "Commits say why. CONVENTIONS-TEXT\n")
	mustWrite(t, filepath.Join(dir, ".claude/commands/fix-issue.md"), "---\ndescription: Fix a numbered issue\nargument-hint: [number] [priority]\nmodel: fixer-model-2\nallowed-tools: Read, Grep, Bash(git status:*)\n---\nFix issue #$1 at priority $2, following @CONVENTIONS.md.\n")
	script := filepath.Join(t.TempDir(), "steps.txt")
	mustWrite(t, script, "/fix-issue 7 high\nand now the rest\n")
	r := ralph(t, dir, env, nil, "script", script)
	if r.code != 0 {
		t.Fatalf("script: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2\n%s", len(reqs), r.stderr)
	}
	last := func(r llmtest.RecordedRequest) string { return r.Request.Messages[len(r.Request.Messages)-1].Content }
	if got := last(reqs[0]); !strings.Contains(got, "Fix issue #7 at priority high, following @CONVENTIONS.md.") || !strings.Contains(got, "CONVENTIONS-TEXT") {
		t.Errorf("the script's custom step sent %q", got)
	}
	if reqs[0].Request.Model != "fixer-model-2" || reqs[1].Request.Model != "session-model" {
		t.Errorf("models %q then %q, want the command's for its turn, then the session's", reqs[0].Request.Model, reqs[1].Request.Model)
	}
	narrowed, whole := offered(reqs[0]), offered(reqs[1])
	for _, name := range []string{"read_file", "search", "run_command"} {
		if !slices.Contains(narrowed, name) {
			t.Errorf("the command's turn lacks %s, which its allowed-tools names: %v", name, narrowed)
		}
	}
	for _, name := range []string{"write_file", "edit_file", "spawn_agent"} {
		if slices.Contains(narrowed, name) || !slices.Contains(whole, name) {
			t.Errorf("%s: offered in the command's turn %v, in the next %v; want only the next", name, narrowed, whole)
		}
	}
	if !strings.Contains(r.stdout+r.stderr, "this turn uses model fixer-model-2") {
		t.Errorf("the model was not said:\n%s", r.stderr)
	}

	r = ralph(t, dir, env, nil, "/fix-issue 9 low")
	reqs = srv.Requests()[2:]
	if r.code != 0 || len(reqs) != 1 {
		t.Fatalf("one-shot: exit %d, %d requests\n%s", r.code, len(reqs), r.stderr)
	}
	if got := last(reqs[0]); !strings.HasPrefix(got, "Fix issue #9 at priority low") || reqs[0].Request.Model != "fixer-model-2" {
		t.Errorf("the one-shot sent %q to %q", got, reqs[0].Request.Model)
	}
	r = ralph(t, dir, env, nil, "/help me with this")
	if reqs = srv.Requests()[3:]; r.code != 0 || len(reqs) != 1 || last(reqs[0]) != "/help me with this" {
		t.Errorf("a built-in's name in a one-shot: exit %d, %d requests\n%s", r.code, len(reqs), r.stderr)
	}
}

// shellCommand is a custom command whose shell line reads a file of the
// project and tries to write into the person's home, which the sandbox
// forbids: its output says which.
const shellCommand = "---\ndescription: Summarise the state\n---\nState: !`cat state.txt; (echo x > \"$HOME/pwned-by-command\") 2>/dev/null && echo ESCAPED || echo CONTAINED`\nSummarise it.\n"

// TestCustomCommandShellLineIsApproved: a custom command's !` line is run
// only as the model's commands are: refused under CI=true with nothing
// sent, run under -y in the sandbox (both sandboxes), and run at the
// terminal once the person approved it, its output in the message.
func TestCustomCommandShellLineIsApproved(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"shell-line","loop":true,"responses":[{"text":"Summarised."}]}`)
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(proj, "state.txt"), "STATE-7f2\n")
	mustWrite(t, filepath.Join(proj, ".claude/commands/state.md"), shellCommand)
	sent := func() string {
		var b strings.Builder
		for _, req := range srv.Requests() {
			b.Write(req.Body)
		}
		return b.String()
	}

	r := ralph(t, proj, attackEnv(t, home, srv.URL, []string{"CI=true"}), nil, "/state")
	if r.code == 0 || !strings.Contains(r.stderr, "was not run") || len(srv.Requests()) != 0 || exists(filepath.Join(home, "pwned-by-command")) {
		t.Fatalf("CI without approval: exit %d, %d requests\n%s", r.code, len(srv.Requests()), r.stderr)
	}

	for _, mode := range sandboxModes {
		r := ralph(t, proj, attackEnv(t, home, srv.URL, append([]string{"CI=true"}, mode.env...)), nil, "-y", "/state")
		if r.code != 0 {
			t.Fatalf("%s, -y: exit %d\n%s", mode.name, r.code, r.stderr)
		}
		if all := sent(); !strings.Contains(all, "State: STATE-7f2\\nCONTAINED") || strings.Contains(all, "ESCAPED") {
			t.Fatalf("%s, -y: the shell line's output did not reach the model as run in the sandbox:\n%s", mode.name, all)
		}
		if exists(filepath.Join(home, "pwned-by-command")) {
			t.Fatalf("%s: the shell line wrote into the person's home", mode.name)
		}
	}

	before := len(srv.Requests())
	c := startPTY(t, proj, attackEnv(t, home, srv.URL, []string{"NO_COLOR=1", "TERM=xterm"}), "chat")
	c.waitIdle(10*time.Second, nil)
	c.typeKeys("/state\r")
	c.waitFor("? [y]es / [n]o", 10*time.Second)
	if len(srv.Requests()) != before {
		t.Fatal("the message was sent before its shell line was approved")
	}
	c.typeKeys("y\r")
	c.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "Summarised.") })
	c.leave(0, 5*time.Second)
	if len(srv.Requests()) != before+1 || !strings.Contains(string(srv.Requests()[before].Body), "STATE-7f2") {
		t.Fatalf("after approval at the terminal the message did not carry the output")
	}
	if exists(filepath.Join(home, "pwned-by-command")) {
		t.Fatal("the approved shell line wrote into the person's home")
	}
}
