package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
