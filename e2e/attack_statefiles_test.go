package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 56, causes 1 and 2: ralph's own files under the project (the
// state markdown, the instructions, .ralph/sessions/<id>/*.jsonl) go
// through the project's door (memory/rootfs), which follows no link out
// of the project and writes through no link at all. Each attack runs in
// the default sandbox and in the Landlock-only fallback, with a home and
// a temporary directory of the test's own outside the project; the
// model's commands are approved with -y.

// secretMarker is what the person's secret file holds; it must never
// reach the stand-in model.
const secretMarker = "SECRET-KEY-MARKER-56"

// turnsServer is a stand-in model that makes the calls of turns in turn,
// one turn a request after the person's message, then answers "done"; it
// keeps every request's body so a test can look for a secret in them.
type turnsServer struct {
	*llmtest.Server
	mu     sync.Mutex
	bodies []string
}

func newTurnsServer(t *testing.T, turns ...[]toolCall) *turnsServer {
	t.Helper()
	ts := &turnsServer{}
	ts.Server = llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		ts.mu.Lock()
		ts.bodies = append(ts.bodies, string(r.Body))
		ts.mu.Unlock()
		// The turn is the number of answers since the person's last
		// message: a continued session (-c) carries the earlier ones.
		n := 0
		for _, m := range r.Request.Messages {
			switch m.Role {
			case "user":
				n = 0
			case "assistant":
				n++
			}
		}
		if n >= len(turns) {
			return llmtest.Response{Text: "done"}
		}
		var calls []llmtest.ToolCall
		for _, c := range turns[n] {
			calls = append(calls, llmtest.ToolCall{Name: c.name, Arguments: c.args})
		}
		return llmtest.Response{ToolCalls: calls}
	})
	t.Cleanup(ts.Close)
	return ts
}

// sent is every request the model was sent, whole.
func (ts *turnsServer) sent() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return strings.Join(ts.bodies, "\n")
}

func cmdCall(command string) []toolCall {
	js, _ := json.Marshal(map[string]string{"command": command})
	return []toolCall{{name: "run_command", args: string(js)}}
}

func jsonArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// secretInHome writes ~/.ssh/id_rsa holding secretMarker, which the
// sandbox hides from commands, and returns its path.
func secretInHome(t *testing.T, home string) string {
	t.Helper()
	p := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(secretMarker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantLink fails the test when the command could not make name a link:
// the attack would then prove nothing.
func wantLink(t *testing.T, proj, name string) {
	t.Helper()
	if fi, err := os.Lstat(filepath.Join(proj, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the command did not make %s a link, so the test proves nothing: %v", name, err)
	}
}

// TestProgressLinkedOutIsNotAppended: a command links RALPH_PROGRESS.md
// to ~/.bashrc (or to a file in home that does not exist yet, or to
// .git/config inside the project), then complete_task appends the
// model's summary: ralph wrote it into the person's next shell, created
// the dangling link's target, or planted a key in .git/config around the
// sandbox's read-only .git. Now the append refuses the link and says so.
func TestProgressLinkedOutIsNotAppended(t *testing.T) {
	t.Parallel()
	const payload = "echo pwned-by-the-model"
	for _, mode := range sandboxModes {
		for _, c := range []struct{ name, target, check string }{
			{"bashrc", "$HOME/.bashrc", ".bashrc"},
			{"dangling", "$HOME/newfile", "newfile"},
			{"git-config", ".git/config", ""},
		} {
			t.Run(mode.name+"/"+c.name, func(t *testing.T) {
				proj, home := attackLayout(t)
				writeTasks(t, proj, "greet the world")
				gitConfig := readFileT(t, filepath.Join(proj, ".git", "config"))
				srv := newTurnsServer(t,
					cmdCall("ln -sf \""+c.target+"\" RALPH_PROGRESS.md && ls -l RALPH_PROGRESS.md"),
					[]toolCall{{name: "complete_task", args: jsonArgs(map[string]string{"id": "greet the world", "summary": payload})}})
				env := attackEnv(t, home, srv.URL, mode.env)
				r := ralph(t, proj, env, nil, "-y", "do the task")
				wantLink(t, proj, "RALPH_PROGRESS.md")
				wantBashrc(t, home)
				if _, err := os.Lstat(filepath.Join(home, "newfile")); !os.IsNotExist(err) {
					t.Fatalf("the dangling link's target ~/newfile was created: %v", err)
				}
				if got := readFileT(t, filepath.Join(proj, ".git", "config")); got != gitConfig {
					t.Fatalf(".git/config was written through the link:\n%s", got)
				}
				if !strings.Contains(srv.sent(), "symbolic link") {
					t.Fatalf("the refusal was not said: exit %d\n%s", r.code, r.stderr)
				}
			})
		}
	}
}

// TestInstructionsLinkedOutStayOut: a command links CLAUDE.md (or
// RALPH_TASKS.md) to a secret file in home it cannot read itself; the
// next session put the secret into the system prompt sent to the
// endpoint. Now the file is left out, and for CLAUDE.md ralph says so in
// one sentence naming how to allow it. CLAUDE.md -> AGENTS.md inside the
// project keeps working.
func TestInstructionsLinkedOutStayOut(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, name := range []string{"CLAUDE.md", "RALPH_TASKS.md"} {
			t.Run(mode.name+"/"+name, func(t *testing.T) {
				proj, home := attackLayout(t)
				secret := secretInHome(t, home)
				plant := newTurnsServer(t, cmdCall("ln -sf \""+secret+"\" "+name+" && ls -l "+name))
				env := attackEnv(t, home, plant.URL, mode.env)
				if r := ralph(t, proj, env, nil, "-y", "set up"); r.code != 0 {
					t.Fatalf("exit %d\n%s", r.code, r.stderr)
				}
				wantLink(t, proj, name)
				next := newTurnsServer(t)
				env = attackEnv(t, home, next.URL, mode.env)
				r := ralph(t, proj, env, nil, "-y", "hello")
				if strings.Contains(plant.sent()+next.sent(), secretMarker) {
					t.Fatalf("the secret reached the endpoint through %s", name)
				}
				if name == "CLAUDE.md" && (!strings.Contains(r.stderr, "CLAUDE.md is a link to") || !strings.Contains(r.stderr, "instruction_links")) {
					t.Fatalf("ralph did not say CLAUDE.md was left out: exit %d\n%s", r.code, r.stderr)
				}
			})
		}
	}
}

// TestInstructionLinkInsideIsRead: CLAUDE.md -> AGENTS.md, a link inside
// the project, is read as it always was.
func TestInstructionLinkInsideIsRead(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	if err := os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte("Always answer in haiku. INSIDE-MARKER\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("AGENTS.md", filepath.Join(proj, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	srv := newTurnsServer(t)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "hello")
	if r.code != 0 || !strings.Contains(srv.sent(), "INSIDE-MARKER") || strings.Contains(r.stderr, "left out") {
		t.Fatalf("CLAUDE.md -> AGENTS.md was not read: exit %d\n%s", r.code, r.stderr)
	}
}

// TestRememberThroughLinkedAgentFile: a command links AGENT.md to a
// secret in home; remember read it and wrote it, with the note, into a
// plain project file the next command reads. Now the secret is copied
// nowhere.
func TestRememberThroughLinkedAgentFile(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			secret := secretInHome(t, home)
			srv := newTurnsServer(t,
				cmdCall("ln -sf \""+secret+"\" AGENT.md"),
				[]toolCall{{name: "remember", args: jsonArgs(map[string]string{"note": "tests run with make test"})}},
				cmdCall("grep -r 'SECRET-KEY-MARK[E]R-56' . --exclude-dir=.git || echo no-secret-here"))
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "-y", "remember")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if strings.Contains(srv.sent(), secretMarker) {
				t.Fatal("the secret reached the endpoint")
			}
			if fi, err := os.Lstat(filepath.Join(proj, "AGENT.md")); err == nil && fi.Mode().IsRegular() {
				if strings.Contains(readFileT(t, filepath.Join(proj, "AGENT.md")), secretMarker) {
					t.Fatal("remember copied the secret into AGENT.md")
				}
			}
		})
	}
}

// TestSessionLogsLinkedOutInFallback: in the fallback a command may write
// .ralph/, and links the session's errors.jsonl and decisions.jsonl to
// ~/.bashrc; the next appends of the same session (continued with -c)
// put model text inside JSON into the person's next shell. Now they
// refuse the link.
func TestSessionLogsLinkedOutInFallback(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	link := `for d in .ralph/sessions/*/; do ln -sf "$HOME/.bashrc" "$d/errors.jsonl"; ln -sf "$HOME/.bashrc" "$d/decisions.jsonl"; done; ls -l .ralph/sessions/*/`
	plant := newTurnsServer(t, cmdCall(link))
	env := attackEnv(t, home, plant.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
	if r := ralph(t, proj, env, nil, "-y", "set up"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	wantLink(t, proj, filepath.Join(strings.TrimPrefix(sessionDir(t, proj), proj+"/"), "decisions.jsonl"))
	decide := newTurnsServer(t,
		[]toolCall{{name: "record_decision", args: jsonArgs(map[string]any{"decision": "echo pwned-by-decision", "reason": "because", "confidence": 0.9})}},
		cmdCall("false"))
	env = attackEnv(t, home, decide.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
	r := ralph(t, proj, env, nil, "-y", "-c", "decide")
	wantBashrc(t, home)
	if !strings.Contains(r.stderr+decide.sent(), "symbolic link") {
		t.Fatalf("the refusal was not said: exit %d\n%s", r.code, r.stderr)
	}
}

// TestRunProgressLinkedOut: the task loop appends the progress entry
// itself once a task is done; with RALPH_PROGRESS.md a link to ~/.bashrc
// (made by a command before), `ralph run` wrote the model's summary
// there. Now it refuses and says so in one sentence.
func TestRunProgressLinkedOut(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	writeTasks(t, proj, "greet the world")
	if err := os.Symlink(filepath.Join(home, ".bashrc"), filepath.Join(proj, "RALPH_PROGRESS.md")); err != nil {
		t.Fatal(err)
	}
	srv := newTurnsServer(t, []toolCall{{name: "complete_task", args: jsonArgs(map[string]string{"id": "t1", "summary": "echo pwned-by-the-model"})}})
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "run", "--max-iterations", "2")
	wantBashrc(t, home)
	if !strings.Contains(r.stderr, "RALPH_PROGRESS.md: a symbolic link") {
		t.Fatalf("the refusal was not said: exit %d\n%s", r.code, r.stderr)
	}
}
