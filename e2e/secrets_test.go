package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestSecretsStayOffDisk: the person types the API key into a chat
// message, and the model repeats it in remember and complete_task and in
// its answer. Afterwards no file in the project or in $HOME holds the key
// — not the session's logs, not AGENT.md, not RALPH_PROGRESS.md — and
// .ralph/.gitignore keeps the session, and itself, out of `git add .`:
// `git status` does not list .ralph/ at all.
func TestSecretsStayOffDisk(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-SECRET-0123456789abcdef"
	args := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: key, Responses: []llmtest.Response{
		{ToolCalls: []llmtest.ToolCall{
			{Name: "remember", Arguments: args(map[string]string{"note": "The API key is " + key})},
			{Name: "complete_task", Arguments: args(map[string]string{"id": "keep the key", "summary": "kept " + key + " safe"})},
		}},
		{Text: "I saved " + key + " for later."},
	}})
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte("- [ ] keep the key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git, hasGit := exec.LookPath("git")
	if hasGit == nil {
		runGit(t, git, dir, "init", "-q")
	}
	env := cleanEnv(t, "OPENAI_API_KEY="+key)
	home := envValue(env, "HOME")
	r := ralph(t, dir, env, strings.NewReader("my key is "+key+", remember it\n"), "chat", "--base-url", srv.URL, "-y")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
	for _, f := range []string{"AGENT.md", "RALPH_PROGRESS.md"} {
		if data, _ := os.ReadFile(filepath.Join(dir, f)); !bytes.Contains(data, []byte("[REDACTED]")) {
			t.Fatalf("%s has no redacted note; did the tool run?\n%s", f, data)
		}
	}
	for _, root := range []string{dir, home} {
		grepTree(t, root, key)
	}
	if hasGit == nil {
		out := runGit(t, git, dir, "add", "--dry-run", ".")
		if strings.Contains(out, ".ralph/") {
			t.Fatalf("git add . would commit ralph's state:\n%s", out)
		}
		if out := runGit(t, git, dir, "status", "--porcelain", "--untracked-files=all"); strings.Contains(out, ".ralph/") {
			t.Fatalf("git status lists ralph's state:\n%s", out)
		}
	}
}

// TestProjectConfigCannotSendTheKeyAway: a cloned repository's
// .ralph/config.toml that points base_url at another host is refused
// before any request, naming the host; one pointing at this machine works
// without the key.
func TestProjectConfigCannotSendTheKeyAway(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-SECRET-0123456789abcdef"
	dir := t.TempDir()
	writeConfig := func(baseURL string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("base_url = \""+baseURL+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := cleanEnv(t, "OPENAI_API_KEY="+key)
	writeConfig("https://collector.example.net/v1")
	r := ralph(t, dir, env, nil, "--json", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "collector.example.net") || !strings.Contains(r.stderr, "will not send your API key") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// One on this machine is used, but gets no key: whatever listens
	// there is not known to be the person's.
	srv := llmtest.NewServer(&llmtest.Scenario{Responses: []llmtest.Response{{Text: "hello"}}})
	t.Cleanup(srv.Close)
	writeConfig(srv.URL)
	if r := ralph(t, dir, env, nil, "--json", "hi"); r.code != 0 {
		t.Fatalf("a loopback base_url: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, q := range srv.Requests() {
		if h := fmt.Sprint(q.Header); strings.Contains(h, key) {
			t.Fatalf("the project's endpoint on this machine got the key: %s", h)
		}
	}
	if r := ralph(t, dir, env, nil, "config"); !strings.Contains(r.stdout, "withheld") {
		t.Fatalf("ralph config does not say the key is withheld:\n%s", r.stdout)
	}
}

// grepTree fails the test if any file under root contains s.
func grepTree(t *testing.T, root, s string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(s)) {
			t.Errorf("%s holds the key:\n%s", p, data)
		}
		return nil
	})
}

func runGit(t *testing.T, git, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(git, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(t, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
