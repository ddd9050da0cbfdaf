package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Approvals in chat take a single key, without Enter, and a command is
// shown running only once it is allowed; "t" is "no, and tell it why",
// whose words reach the model; the key that says what "always" means is
// pointed to at the first question only; "a" remembers the rule in the
// person's own config and "p" in the project's, which git shares.
func TestChatApprovalsTakeOneKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := chatEnv(t)
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo one"}, {"cat two"}, {"touch three"}, {"mkdir four"}}, "All done."))
	r := startPTY(t, dir, env, "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("go\r")
	r.waitFor("run `echo one`? [y]es / [n]o / [t]ell it why not / [a]lways / [p]roject always", 10*time.Second)
	// The whole word and Enter, out of habit: one answer, and nothing
	// of it is left for the prompt.
	r.typeKeys("yes\r")
	r.waitFor("run `cat two`?", 10*time.Second)
	r.typeKeys("t")
	r.waitFor("tell ralph why not", 5*time.Second)
	r.typeKeys("use printf instead\r")
	r.waitFor("run `touch three`?", 10*time.Second)
	r.typeKeys("a")
	// The rest of the word, typed just after the key had answered, is
	// dropped rather than left for the prompt or the next question.
	r.waitFor("allowed from now on: `touch`", 10*time.Second)
	r.typeKeys("lways\r")
	r.waitFor("run `mkdir four`?", 10*time.Second)
	r.typeKeys("p")
	r.waitFor("All done.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
	raw := r.out.Since(0)
	if strings.Contains(raw, "please answer") {
		t.Errorf("a key or the rest of a word was not taken as meant:\n%s", r.screen())
	}
	// A command is shown running once it is allowed, not before.
	if q, run := strings.Index(raw, "run `echo one`?"), strings.Index(raw, "• running `echo one`"); q < 0 || run < q {
		t.Errorf("echo one was shown running (at %d) before its question (at %d)", run, q)
	}
	if strings.Contains(raw, "• running `cat two`") {
		t.Error("the refused cat two was shown running")
	}
	if n := strings.Count(raw, "(? explains)"); n != 1 {
		t.Errorf("the key that says what always means was pointed to %d times for 4 questions, want once", n)
	}
	if !exists(filepath.Join(dir, "three")) || !exists(filepath.Join(dir, "four")) {
		t.Errorf("the approved commands did not run:\n%s", r.screen())
	}
	reqs := srv.Requests()
	if len(reqs) < 3 || !strings.Contains(string(reqs[2].Body), "use printf instead") {
		t.Fatalf("the person's reason did not reach the model")
	}
	if got, _ := os.ReadFile(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml")); string(got) != "allowed_commands = [\"touch\"]\n" {
		t.Errorf("your config.toml = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".ralph", "config.toml")); string(got) != "allowed_commands = [\"mkdir\"]\n" {
		t.Errorf("the project's config.toml = %q", got)
	}
	if s := r.screen(); len(reqs) != 5 || strings.Contains(s, "› es") || strings.Contains(s, "ralph> es") {
		t.Errorf("keys leaked to the prompt:\n%s", s)
	}
}

// A one-shot on a terminal takes an approval's key without Enter too,
// shows the command running only once allowed, and "t" sends the
// person's words to the model.
func TestOneShotApprovalTakesOneKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := inlineServer(t, commandScenario(t, [][]string{{"touch one"}, {"touch two"}}, "Finished."))
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "make files")
	r.waitFor("run `touch one`? [y]es / [n]o / [t]ell it why not / [a]lways", 10*time.Second)
	r.typeKeys("y")
	r.waitFor("run `touch two`?", 10*time.Second)
	r.typeKeys("t")
	r.waitFor("tell ralph why not", 5*time.Second)
	r.typeKeys("not now\r")
	r.waitFor("Finished.", 10*time.Second)
	r.expectExit(0, 10*time.Second)
	if !exists(filepath.Join(dir, "one")) || exists(filepath.Join(dir, "two")) {
		t.Fatalf("one made %v, two made %v", exists(filepath.Join(dir, "one")), exists(filepath.Join(dir, "two")))
	}
	raw := r.out.Since(0)
	if q, run := strings.Index(raw, "run `touch one`?"), strings.Index(raw, "• running `touch one`"); q < 0 || run < q {
		t.Errorf("touch one was shown running (at %d) before its question (at %d)", run, q)
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "not now") {
		t.Fatal("the person's reason did not reach the model")
	}
}
