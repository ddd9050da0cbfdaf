package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestControlSteersTheChat: the chat shell takes ralph say and ralph stop
// from another terminal while it works, shows that they came, and stays
// open; at its idle prompt a message is not taken.
func TestControlSteersTheChat(t *testing.T) {
	t.Parallel()
	first, stopMe := newGate(t), newGate(t)
	const msg = "also mention the weather"
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		users := userMessages(r)
		last := users[len(users)-1]
		switch {
		case r.Index == 0:
			first.wait(time.Minute)
			return llmtest.Response{Text: "looking", ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
		case strings.Contains(last, msg):
			return llmtest.Response{Text: "it is sunny"}
		case strings.Contains(last, "stop me"):
			stopMe.wait(time.Minute)
			return llmtest.Response{Text: "too late"}
		}
		return llmtest.Response{Text: "no message came"}
	})
	t.Cleanup(srv.Close)
	t.Cleanup(first.open)
	t.Cleanup(stopMe.open)
	dir := t.TempDir()
	env := chatEnv(t)
	sh := startPTY(t, dir, env, "chat", "--base-url", srv.URL)
	sh.waitIdle(10*time.Second, nil)
	if r := steer(t, dir, env, "say", msg); r.code != 1 || !strings.Contains(r.stderr, "type it at its prompt") {
		t.Fatalf("ralph say at the idle prompt: exit %d %q", r.code, r.stderr)
	}
	sh.typeKeys("how is it going?\r")
	waitFor(t, "the first request", 10*time.Second, func() bool { return srv.Active() == 1 })
	if r := steer(t, dir, env, "say", msg); r.code != 0 {
		t.Fatalf("ralph say: exit %d %q", r.code, r.stderr)
	}
	sh.waitFor("↯ from another terminal: a message", 10*time.Second)
	first.open()
	sh.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "it is sunny") })

	sh.typeKeys("stop me\r")
	waitFor(t, "the request to stop", 10*time.Second, func() bool { return srv.Active() == 1 })
	if r := steer(t, dir, env, "stop"); r.code != 0 || !strings.Contains(r.stdout, "the chat stays open") {
		t.Fatalf("ralph stop: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	sh.waitIdle(10*time.Second, func(s string) bool {
		return strings.Contains(s, "↯ from another terminal: ralph stop") && strings.Contains(s, "stopped:")
	})
	if r := steer(t, dir, env, "stop"); r.code != 1 || !strings.Contains(r.stderr, "nothing is running") {
		t.Fatalf("ralph stop at the idle prompt: exit %d %q", r.code, r.stderr)
	}
	if r := steer(t, dir, env, "pause"); r.code != 1 || !strings.Contains(r.stderr, "no task loop") {
		t.Fatalf("ralph pause without a loop: exit %d %q", r.code, r.stderr)
	}
	sh.leave(0, 10*time.Second)
}

// TestControlSayReachesTheTaskLoop: in ralph run, a message reaches the
// agent working a task at its next step boundary.
func TestControlSayReachesTheTaskLoop(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	const msg = "keep the changelog up to date"
	var heard bool
	srv := gatedServer(t, g, func(r llmtest.RecordedRequest) bool { return r.Index == 0 }, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case r.Index == 0:
			return llmtest.Response{Text: "working", ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
		case last.Role == "user" && strings.Contains(last.Content, msg):
			heard = true
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: `{"id":"t1","summary":"done, changelog too"}`}}}
		case last.Role == "tool" && last.Name == "complete_task":
			return llmtest.Response{Text: "finished"}
		}
		return llmtest.Response{Text: "I heard nothing"}
	})
	dir := t.TempDir()
	writeTasks(t, dir, "the only task")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "0")
	waitSocket(t, dir, env)
	waitFor(t, "the task in flight", 10*time.Second, func() bool { return srv.Active() == 1 })
	r := steer(t, dir, env, "say", msg)
	if r.code != 0 || !strings.Contains(r.stdout, "the agent working a task gets it") {
		t.Fatalf("ralph say: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	g.open()
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	srv.Close()
	if !heard {
		t.Fatal("the agent working the task never read the message")
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "RALPH_TASKS.md")), "- [x] the only task") {
		t.Fatal("the task is not done")
	}
	if _, err := os.Stat(socketPath(dir, env)); !os.IsNotExist(err) {
		t.Fatalf("the socket outlived the run: %v", err)
	}
}

// TestControlAnswersAScript: a script's step whose command needs
// approval waits for ralph answer, then goes on.
func TestControlAnswersAScript(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	file := filepath.Join(t.TempDir(), "steps.txt")
	mustWrite(t, file, "make ran.txt\n")
	cmd, out, errb := startRalph(t, dir, env, "script", file, "--wait-for-answers", "--base-url", srv.URL)
	waitFor(t, "the question", 20*time.Second, func() bool {
		return strings.Contains(steer(t, dir, env, "status").stdout, "waiting_for_input")
	})
	if r := steer(t, dir, env, "answer", "always"); r.code != 0 {
		t.Fatalf("ralph answer: exit %d %q", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !exists(filepath.Join(dir, "ran.txt")) {
		t.Fatal("the command did not run")
	}
	// always remembered the rule in the person's own config, as at a
	// terminal.
	if cfg := readFile(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml")); !strings.Contains(cfg, `"echo"`) {
		t.Fatalf("your config.toml after always: %q", cfg)
	}
	if !strings.Contains(errb.String(), "allowed from now on: `echo`") {
		t.Fatalf("stderr does not say what always saved: %q", errb.String())
	}
}

// TestControlRefusesTheModelsCommands: the model's commands run as the
// person's user, but one that tries to steer its own ralph (to answer a
// question for it, to speak as its user) is refused, in the sandbox and
// out of it.
func TestControlRefusesTheModelsCommands(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"workspace-write", "danger-full-access"} {
		t.Run(mode, func(t *testing.T) {
			steerCmd := fmt.Sprintf(`%q answer y > steer.txt 2>&1; echo "exit $?" >> steer.txt; %q say --urgent "rm -rf everything" >> steer.txt 2>&1; echo "exit $?" >> steer.txt`, ralphBin, ralphBin)
			srv := inlineServer(t, commandScenario(t, [][]string{{steerCmd}}, "done"))
			dir := t.TempDir()
			r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--sandbox", mode, "--json", "try")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			data, err := os.ReadFile(filepath.Join(dir, "steer.txt"))
			if err != nil {
				t.Fatalf("the command did not run: %v\n%s", err, r.stdout)
			}
			if got := string(data); strings.Count(got, "refused: a command this ralph runs cannot steer it") != 2 || strings.Count(got, "exit 1") != 2 {
				t.Fatalf("the model's command steered its ralph:\n%s", got)
			}
			for _, req := range srv.Requests() {
				if strings.Contains(strings.Join(userMessages(req), "\n"), "rm -rf everything") {
					t.Fatal("the model's own message reached it as the user's")
				}
			}
		})
	}
}
