//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 92, item 6: the notices of the variables withheld from commands
// are said once per person for each set of names, remembered in the
// person's state directory (never the project's .ralph/), in one-shot
// and chat alike; and never between a question and its answer: not after
// a command the person declined.

const commandsNotice = "commands run without"
const settingsNotice = "env of ~/.claude/settings.json but ANTHROPIC_BASE_URL"

// A one-shot run names the withheld variables the first time, not the
// second, and again once the set changed.
func TestWithheldNoticeOncePerPersonOneShot(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t, "DEPLOY_TOKEN=abc")
	home := envValue(env, "HOME")
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"env":{"ANTHROPIC_BASE_URL":"http://127.0.0.1:9"}}`)
	dir := t.TempDir()
	run := func(env []string) string {
		t.Helper()
		srv := inlineServer(t, commandScenario(t, [][]string{{"echo hi"}}, "Finished."))
		r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "run it")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		return r.stderr
	}
	first := run(env)
	for _, want := range []string{commandsNotice, settingsNotice} {
		if n := strings.Count(first, want); n != 1 {
			t.Fatalf("the first run says %q %d times, want once:\n%s", want, n, first)
		}
	}
	if again := run(env); strings.Contains(again, commandsNotice) || strings.Contains(again, settingsNotice) {
		t.Fatalf("the second run said the same notice again:\n%s", again)
	}
	changed := run(append(env, "SECOND_TOKEN=xyz"))
	if !strings.Contains(changed, commandsNotice) || !strings.Contains(changed, "SECOND_TOKEN") {
		t.Fatalf("a new withheld variable was not named:\n%s", changed)
	}
	if strings.Contains(changed, settingsNotice) {
		t.Fatalf("the settings' notice came again though its set is the same:\n%s", changed)
	}
	// The record is the person's, not the project's.
	if _, err := os.Stat(filepath.Join(envValue(env, "XDG_STATE_HOME"), "ralph", "notices-shown.json")); err != nil {
		t.Fatalf("no record in the person's state directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".ralph", "notices-shown.json")); err == nil {
		t.Fatalf("the record is in the project's .ralph: %s", b)
	}
}

// In chat a declined command brings no notice between the question and
// the model's answer; the first command that runs does, once.
func TestWithheldNoticeNotAfterDeclinedChat(t *testing.T) {
	t.Parallel()
	call := func(cmd string) map[string]any {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return map[string]any{"tool_calls": []map[string]string{{"name": "run_command", "arguments": string(args)}}}
	}
	js, _ := json.Marshal(map[string]any{"name": "declined", "responses": []any{
		call("echo first"), map[string]string{"text": "Fine, not run."},
		call("echo second"), map[string]string{"text": "Finished."},
	}})
	srv := inlineServer(t, string(js))
	c := startTmux(t, t.TempDir(), []string{"DEPLOY_TOKEN=abc"}, 100, 30, "chat", "--base-url", srv.URL)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "run the first", "Enter")
	c.waitFor("the question", 20*time.Second, func(s string) bool { return strings.Contains(s, "run `echo first`?") })
	c.tmux("send-keys", "n")
	c.waitFor("the answer", 20*time.Second, func(s string) bool { return strings.Contains(s, "Fine, not run.") && idlePrompt.MatchString(s) })
	time.Sleep(500 * time.Millisecond)
	if s := c.screen(); strings.Contains(s, commandsNotice) {
		t.Fatalf("the notice came after a declined command:\n%s", tailOf(s, 3000))
	}
	c.tmux("send-keys", "run the second", "Enter")
	c.waitFor("the question", 20*time.Second, func(s string) bool { return strings.Contains(s, "run `echo second`?") })
	c.tmux("send-keys", "y")
	c.waitFor("the answer", 20*time.Second, func(s string) bool { return strings.Contains(s, "Finished.") && idlePrompt.MatchString(s) })
	time.Sleep(300 * time.Millisecond)
	s := c.screen()
	if n := strings.Count(strings.ReplaceAll(s, "\n", ""), commandsNotice); n != 1 {
		t.Fatalf("the notice is there %d times after the command that ran, want once:\n%s", n, tailOf(s, 3000))
	}
	if strings.Index(s, commandsNotice) < strings.Index(s, "run `echo second`?") {
		t.Fatalf("the notice came before the question:\n%s", tailOf(s, 3000))
	}
}
