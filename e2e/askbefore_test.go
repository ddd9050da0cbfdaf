package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// askBeforeScenario: the model pushes, writes go.mod, and runs a harmless
// command, all in one turn, then answers.
func askBeforeScenario(t testing.TB) string {
	t.Helper()
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	sc := map[string]any{"name": "ask_before", "responses": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"name": "run_command", "arguments": args(map[string]string{"command": "git push origin main; touch pushed.txt"})},
		}},
		map[string]any{"tool_calls": []any{
			map[string]any{"name": "write_file", "arguments": args(map[string]string{"path": "go.mod", "content": "module evil\n"})},
		}},
		map[string]any{"tool_calls": []any{
			map[string]any{"name": "run_command", "arguments": args(map[string]string{"command": "touch ok.txt"})},
		}},
		map[string]any{"text": "Finished."},
	}}
	js, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// askBeforeEnv is a clean environment whose user config holds ask_before.
func askBeforeEnv(t testing.TB, env []string) []string {
	t.Helper()
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), `ask_before = ["git push*", "go.mod"]`+"\n")
	return env
}

// TestAskBeforeRefusedHeadlessEvenWithYes: with nobody to ask (no
// terminal, and --no-wait: no waiting for ralph answer either), --yes
// does not let `git push origin main` run nor go.mod be written; each
// refusal is one sentence the model reads; everything else --yes allows
// runs.
func TestAskBeforeRefusedHeadlessEvenWithYes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "go.mod"), "module mine\n")
	srv := inlineServer(t, askBeforeScenario(t))
	r := ralph(t, dir, askBeforeEnv(t, cleanEnv(t)), nil, "--base-url", srv.URL, "-y", "--json", "push it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if exists(filepath.Join(dir, "pushed.txt")) {
		t.Fatal("the command holding git push ran under --yes")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(got) != "module mine\n" {
		t.Fatalf("go.mod was written under --yes: %q", got)
	}
	if !exists(filepath.Join(dir, "ok.txt")) {
		t.Fatal("--yes no longer runs a command ask_before does not name")
	}
	reqs := srv.Requests()
	results := map[int]string{}
	for i := 1; i < len(reqs); i++ {
		msgs := reqs[i].Request.Messages
		results[i] = msgs[len(msgs)-1].Content
	}
	for i, want := range map[int]string{
		1: "command was not run: `git push origin main` needs a person's approval (ask_before \"git push*\" in the config) and nobody can be asked here (there is no terminal to ask at), so it was not done",
		2: "write_file was not done: write_file go.mod needs a person's approval (ask_before \"go.mod\" in the config) and nobody can be asked here (there is no terminal to ask at), so it was not done",
	} {
		if results[i] != want {
			t.Errorf("tool result %d = %q\nwant %q", i, results[i], want)
		}
	}
}

// TestAskBeforeAsksOnATerminalEvenWithYes: on a terminal, --yes still
// asks about the push and the write to go.mod, without offering
// "always"; n refuses the push, y lets the write happen.
func TestAskBeforeAsksOnATerminalEvenWithYes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "go.mod"), "module mine\n")
	srv := inlineServer(t, askBeforeScenario(t))
	r := startPTY(t, dir, askBeforeEnv(t, chatEnv(t)), "--base-url", srv.URL, "-y", "push it")
	r.waitFor("run `git push origin main; touch pushed.txt`? [y]es / [n]o", 20*time.Second)
	r.waitRawText(`asked every time, no [a]lways: ask_before "git push*" matches `+"`git push origin main`", time.Second)
	r.typeKeys("n\r")
	r.waitFor("change go.mod (write_file)? [y]es / [n]o", 20*time.Second)
	r.typeKeys("y\r")
	r.waitFor("Finished.", 20*time.Second)
	r.expectExit(0, 10*time.Second)
	if exists(filepath.Join(dir, "pushed.txt")) {
		t.Fatal("the declined push ran")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(got) != "module evil\n" {
		t.Fatalf("the approved write did not happen: %q", got)
	}
	if !exists(filepath.Join(dir, "ok.txt")) {
		t.Fatal("touch ok.txt did not run")
	}
	if n := strings.Count(r.screen(), "? [y]es / [n]o"); n != 2 {
		t.Fatalf("asked %d times, want 2:\n%s", n, r.screen())
	}
}
