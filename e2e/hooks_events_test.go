package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/fixtures"
)

// The end-to-end tests of issue 59's hook events, with public hooks nobody
// here wrote (the claude-code-hooks fixture: karanb192/claude-code-hooks,
// MIT), run unchanged as the person's hooks (~/.claude/settings.json) in
// the attack layout (HOME and TMPDIR outside the project): a PreToolUse
// guard on Bash denies a dangerous command, which never runs, and the
// model reads why; a PreToolUse guard on Read|Edit|Write|Bash keeps .env
// from the model; a PostToolUse hook on Edit|Write stages the file it
// wrote, and undo takes it back; SessionStart and SessionEnd hooks keep a
// note of the session (written into the project here, which the sandbox
// lets a hook write). Each runs in the default sandbox and in the fallback
// without user namespaces, where hooks run in the sandbox too.

// publicHook is the command that runs the public plugin name's script as
// its hooks.json does (node "${CLAUDE_PLUGIN_ROOT}/name.js"), with the
// plugin's directory spelled out.
func publicHook(t *testing.T, name string) string {
	t.Helper()
	return `node "` + fixtures.Path(t, "claude-code-hooks", "plugins", name, name+".js") + `"`
}

// personHooks writes the person's ~/.claude/settings.json in home with
// hooks, a JSON object of events.
func personHooks(t *testing.T, home, hooks string) {
	t.Helper()
	dir := filepath.Join(home, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"hooks":`+hooks+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// guardRefused reports whether result is a call the public guard
// refused for its rule id, with the guard's reason.
func guardRefused(result, id string) bool {
	return strings.Contains(result, "a PreToolUse hook refused this call") && strings.Contains(result, id)
}

// hookGroup is one event's matcher group running command.
func hookGroup(matcher, command string) string {
	return `[{"matcher":` + quoteJSON(matcher) + `,"hooks":[{"type":"command","command":` + quoteJSON(command) + `}]}]`
}

// toolResults are the results of the model's tool calls, as its requests
// carried them back, in order.
func hookedResults(srv *llmtest.Server) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		for _, m := range r.Request.Messages {
			if m.Role == "tool" && !seen[m.ToolCallID] {
				seen[m.ToolCallID] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// sentToModel reports whether s was in any request the model got.
func sentToModel(srv *llmtest.Server, s string) bool {
	for _, r := range srv.Requests() {
		for _, m := range r.Request.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
		}
	}
	return false
}

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; the test set-up installs it")
	}
}

// TestHooksEventsBlockDangerousCommands: block-dangerous-commands, a
// PreToolUse hook on Bash, denies `git reset --hard`: the command never
// runs (its first part would leave a marker) and the model's next request
// carries the hook's reason as the call's result.
func TestHooksEventsBlockDangerousCommands(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", publicHook(t, "block-dangerous-commands"))+`}`)
			srv := inlineServer(t, toolScenario(t, "danger", [][]toolCall{
				{{"run_command", `{"command":"touch ran-marker && git reset --hard"}`}},
				{{"run_command", `{"command":"touch safe-marker"}`}},
			}, "done"))
			envv := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "clean the tree")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(proj, "ran-marker")); err == nil {
				t.Fatal("the dangerous command ran")
			}
			if _, err := os.Stat(filepath.Join(proj, "safe-marker")); err != nil {
				t.Fatalf("the harmless command did not run: %v", err)
			}
			res := hookedResults(srv)
			if len(res) != 2 || !guardRefused(res[0], "git-reset-hard") {
				t.Fatalf("results the model read: %q", res)
			}
			wantBashrc(t, home)
		})
	}
}

// TestHooksEventsProtectSecrets: protect-secrets, a PreToolUse hook on
// Read|Edit|Write|Bash, keeps .env from the model: read_file, write_file
// and `cat .env` are refused, the secret never reaches the endpoint, and
// the file is as it was.
func TestHooksEventsProtectSecrets(t *testing.T) {
	t.Parallel()
	needNode(t)
	const secret = "sk-live-e2e-hooks-0123456789"
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			env := filepath.Join(proj, ".env")
			if err := os.WriteFile(env, []byte("API_KEY="+secret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			personHooks(t, home, `{"PreToolUse":`+hookGroup("Read|Edit|Write|Bash", publicHook(t, "protect-secrets"))+`}`)
			srv := inlineServer(t, toolScenario(t, "secrets", [][]toolCall{
				{{"read_file", `{"path":".env"}`}},
				{{"write_file", `{"path":".env","content":"API_KEY=stolen\n"}`}},
				{{"run_command", `{"command":"cat .env"}`}},
				{{"read_file", `{"path":"README.md"}`}},
			}, "done"))
			envv := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "show me the config")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if sentToModel(srv, secret) {
				t.Fatal("the secret in .env reached the endpoint")
			}
			if got := readFileT(t, env); got != "API_KEY="+secret+"\n" {
				t.Fatalf(".env is %q now", got)
			}
			res := hookedResults(srv)
			if len(res) != 4 {
				t.Fatalf("results %q", res)
			}
			for i, want := range []string{"env-file", "env-file", "cat-env"} {
				if !guardRefused(res[i], want) {
					t.Fatalf("result %d %q: want refused by %s", i, res[i], want)
				}
			}
			if strings.Contains(res[3], "refused") {
				t.Fatalf("reading README.md was refused: %q", res[3])
			}
		})
	}
}

// TestHooksEventsAutoStageAndUndo: auto-stage, a PostToolUse hook on
// Edit|Write, stages the file write_file wrote (git add), and ralph undo
// --git takes the request back, the file and its staging with it.
func TestHooksEventsAutoStageAndUndo(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			srv := inlineServer(t, toolScenario(t, "stage", [][]toolCall{
				{{"write_file", `{"path":"notes/new.txt","content":"hello\n"}`}},
			}, "done"))
			envv := attackEnv(t, home, srv.URL, mode.env)
			personHooks(t, home, `{"PostToolUse":`+hookGroup("Edit|Write", publicHook(t, "auto-stage"))+`}`)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "write a note")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if staged := gitOut(t, proj, envv, "diff", "--cached", "--name-only"); staged != "notes/new.txt" {
				t.Fatalf("staged %q: want the file auto-stage staged", staged)
			}
			// The hook's git add ran inside the step's checkpoint window:
			// undo takes the file back and, with --git, the index too, as
			// for the model's own git commands.
			if u := ralph(t, proj, envv, nil, "undo", "--git"); u.code != 0 || !strings.Contains(u.stdout+u.stderr, "read-tree") {
				t.Fatalf("undo --git: exit %d: %s %s", u.code, u.stdout, u.stderr)
			}
			if _, err := os.Stat(filepath.Join(proj, "notes", "new.txt")); err == nil {
				t.Fatal("undo left the file the request wrote")
			}
			if staged := gitOut(t, proj, envv, "status", "--short"); staged != "" {
				t.Fatalf("after undo --git, git status %q: want the index as it was", staged)
			}
		})
	}
}

// TestHooksEventsSessionLogger: session-logger's SessionStart and
// SessionEnd hooks keep a note of a one-shot session: started with the
// session's id and the project, ended when ralph ends.
func TestHooksEventsSessionLogger(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			notes := filepath.Join(proj, "session-notes")
			logger := "CC_SESSION_LOG_DIR=" + notes + " " + publicHook(t, "session-logger")
			srv := inlineServer(t, `{"name":"hi","responses":[{"text":"hello"}]}`)
			envv := attackEnv(t, home, srv.URL, mode.env)
			personHooks(t, home, `{"SessionStart":`+hookGroup("", logger)+`,"SessionEnd":`+hookGroup("", logger)+`}`)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "--json", "say hi")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			id, _ := resultLine(t, r.stdout)["session_id"].(string)
			files, _ := filepath.Glob(filepath.Join(notes, "*.md"))
			if len(files) != 1 {
				t.Fatalf("session notes %v: want one", files)
			}
			note := readFileT(t, files[0])
			if id == "" || !strings.Contains(note, "session_id: "+id) || !strings.Contains(note, "cwd: "+proj) {
				t.Fatalf("note %q: want session %s in %s", note, id, proj)
			}
			if !strings.Contains(note, "## Session End") || strings.Contains(note, "\nended:\n") {
				t.Fatalf("note %q: SessionEnd did not finish it", note)
			}
		})
	}
}

// gitOut is git's trimmed output in dir.
func gitOut(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestHooksEventsConversation: the person's UserPromptSubmit hook drops a
// prompt that asks to deploy (the model is never asked, the person reads
// why) and adds context to any other prompt's user turn; their Stop hook
// keeps the agent working once, with its reason as the next user message,
// and lets it stop when stop_hook_active says it already did.
func TestHooksEventsConversation(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			dir := filepath.Join(home, ".claude", "hooks")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			prompt := filepath.Join(dir, "prompt.sh")
			stop := filepath.Join(dir, "stop.sh")
			for path, body := range map[string]string{
				prompt: "in=$(cat)\ncase \"$in\" in *deploy*) echo 'deploys go through the release train' >&2; exit 2;; esac\necho 'the release train leaves on Fridays'\n",
				stop:   "in=$(cat)\ncase \"$in\" in *'\"stop_hook_active\":true'*) exit 0;; esac\necho 'run the tests first' >&2\nexit 2\n",
			} {
				if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			personHooks(t, home, `{"UserPromptSubmit":`+hookGroup("", "sh "+prompt)+`,"Stop":`+hookGroup("", "sh "+stop)+`}`)
			srv := inlineServer(t, `{"name":"conv","responses":[{"text":"done"},{"text":"tests pass"}]}`)
			envv := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "deploy it now")
			if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "deploys go through the release train") {
				t.Fatalf("exit %d, stdout %q, stderr %q: want the prompt dropped with the hook's reason", r.code, r.stdout, r.stderr)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Fatalf("%d requests: a dropped prompt must not reach the model", n)
			}
			r = ralph(t, proj, envv, nil, "-y", "--no-wait", "--json", "fix the bug")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := resultLine(t, r.stdout)["result"]; got != "tests pass" {
				t.Fatalf("result %v: want the answer after the Stop hook kept it going", got)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			first := reqs[0].Request.Messages
			if first[0].Role != "system" || strings.Contains(first[0].Content, "release train") ||
				!strings.Contains(first[len(first)-1].Content, "fix the bug") || !strings.Contains(first[len(first)-1].Content, "the release train leaves on Fridays") {
				t.Fatalf("first request: want the hook's context in the user turn, not the system prompt: %+v", first)
			}
			second := reqs[1].Request.Messages
			if last := second[len(second)-1]; last.Role != "user" || !strings.Contains(last.Content, "run the tests first") {
				t.Fatalf("second request's last message %+v: want the Stop hook's reason", last)
			}
		})
	}
}

// TestHooksEventsAskGoesToTheApprovalPath: the person's PreToolUse hook
// answers "ask" for a command. Where nobody can answer (a one-shot with
// no terminal) the command is refused, saying why, though -y approves
// commands: -y does not answer for a person a hook asked for. In a run
// left working, the question waits in ralph status, `ralph answer y`
// answers it, and the command runs.
func TestHooksEventsAskGoesToTheApprovalPath(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	ask := filepath.Join(home, "ask.sh")
	body := "#!/bin/sh\ncat >/dev/null\nprintf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"it touches the release\"}}'\n"
	if err := os.WriteFile(ask, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", "sh "+ask)+`}`)
	scenario := toolScenario(t, "ask", [][]toolCall{{{"run_command", `{"command":"touch asked-marker"}`}}}, "done")

	srv := inlineServer(t, scenario)
	env := attackEnv(t, home, srv.URL, nil)
	r := ralph(t, proj, env, nil, "-y", "--no-wait", "--json", "touch it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(proj, "asked-marker")); err == nil {
		t.Fatal("the command ran though nobody answered the hook's question")
	}
	if res := hookedResults(srv); len(res) != 1 || !strings.Contains(res[0], "a PreToolUse hook asks: it touches the release") {
		t.Fatalf("the model read %q", res)
	}

	srv = inlineServer(t, scenario)
	env = attackEnv(t, home, srv.URL, nil)
	writeTasks(t, proj, "touch the marker")
	cmd, out, errb := startRalph(t, proj, env, "-y", "run", "--retries", "0")
	waitSocket(t, proj, env)
	waitFor(t, "the hook's question in ralph status", 30*time.Second, func() bool {
		return strings.Contains(ralph(t, proj, env, nil, "status", "--json").stdout, "touch asked-marker")
	})
	if a := steer(t, proj, env, "answer", "y"); a.code != 0 {
		t.Fatalf("ralph answer y: exit %d %q %q", a.code, a.stdout, a.stderr)
	}
	if code, _ := exitCode(t, cmd, 60*time.Second); code > 1 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(proj, "asked-marker")); err != nil {
		t.Fatalf("the command the person approved did not run: %v\n%s", err, errb.String())
	}
}

// TestHooksEventsHardStopKillsAHook: a hard stop (Ctrl-C) while the
// person's PreToolUse hook runs ends ralph at once and kills the hook's
// process group, a child it started in the background included: nothing
// it would do after the stop happens, and the guarded command never runs.
func TestHooksEventsHardStopKillsAHook(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			marks := filepath.Join(proj, "marks")
			if err := os.MkdirAll(marks, 0o755); err != nil {
				t.Fatal(err)
			}
			slow := filepath.Join(home, "slow.sh")
			// The hook sleeps far longer than ralph may take to stop, so a
			// ralph that waited for it is told from one that stopped it
			// even on a machine the whole suite loads, where ralph's stop
			// (its saves, on a busy disk) once took 3 s.
			body := "#!/bin/sh\ncat >/dev/null\n(sleep 10; touch \"" + marks + "/child-after\") &\ntouch \"" + marks + "/started\"\nsleep 10\ntouch \"" + marks + "/after\"\n"
			if err := os.WriteFile(slow, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", "sh "+slow)+`}`)
			srv := inlineServer(t, toolScenario(t, "slow", [][]toolCall{{{"run_command", `{"command":"touch ran-marker"}`}}}, "done"))
			cmd, out, errb := startRalph(t, proj, attackEnv(t, home, srv.URL, mode.env), "-y", "--no-wait", "touch it")
			waitFor(t, "the hook to start", 30*time.Second, func() bool { return exists(filepath.Join(marks, "started")) })
			_ = cmd.Process.Signal(syscall.SIGINT)
			if _, took := exitCode(t, cmd, 20*time.Second); took > 6*time.Second {
				t.Errorf("ralph took %s to stop while a hook ran\n%s\n%s", took, out.String(), errb.String())
			}
			time.Sleep(11 * time.Second)
			for _, name := range []string{"after", "child-after"} {
				if exists(filepath.Join(marks, name)) {
					t.Errorf("the hook's %s ran after the stop", name)
				}
			}
			if exists(filepath.Join(proj, "ran-marker")) {
				t.Error("the guarded command ran")
			}
		})
	}
}
