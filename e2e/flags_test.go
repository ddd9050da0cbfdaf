package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/workerstest"
)

// TestFlagTypoSuggested: a mistyped flag is answered with the flag it was
// one typo from, in one sentence, exit 2, before anything runs.
func TestFlagTypoSuggested(t *testing.T) {
	t.Parallel()
	for typo, want := range map[string]string{"--jsno": "--json", "--modle": "--model", "--sanbox": "--sandbox", "-jsno": "--json"} {
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, typo, "x", "hello")
		if line := "ralph: unknown flag " + typo + "; did you mean " + want + "?\n"; r.code != 2 || r.stderr != line {
			t.Errorf("ralph %s: exit %d, stderr %q; want exit 2, %q", typo, r.code, r.stderr, line)
		}
	}
}

// TestDangerouslySkipPermissions: Claude Code's flag is -y --sandbox
// danger-full-access: the command runs unasked, writes outside the
// project, and the run is warned about as Claude Code warns.
func TestDangerouslySkipPermissions(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	srv := inlineServer(t, `{"name":"skip","responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"echo ran > `+outside+`\"}"}]},
		{"text":"done"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "--dangerously-skip-permissions", "write outside")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the command did not write outside the project: %v\n%s", err, r.stderr)
	}
	if !strings.Contains(r.stderr, "WARNING: with --dangerously-skip-permissions (-y --sandbox danger-full-access) ralph will not ask for your approval before running potentially dangerous commands") {
		t.Errorf("no warning: %q", r.stderr)
	}
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--dangerously-skip-permissions", "-s", "read-only", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "cannot go with --sandbox read-only") {
		t.Errorf("with --sandbox read-only: exit %d, %q; want exit 2 and why", r.code, r.stderr)
	}
}

// complete asks the binary's shell completion (cobra's __complete) for
// the words completing the last of args, without the directive line.
func complete(t *testing.T, dir string, env []string, args ...string) []string {
	t.Helper()
	r := ralph(t, dir, env, nil, append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, r.code, r.stderr)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !strings.HasPrefix(l, ":") {
			out = append(out, l)
		}
	}
	return out
}

// TestFlagValuesComplete: the shell completes the values of --sandbox,
// --output-format, --agent, --resume (ids, described by their first
// prompt) and --model (the endpoint's list, cached for when it is gone).
func TestFlagValuesComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The cache outside the temporary directory: ralph keeps none where
	// the model's commands may write.
	env := cleanEnv(t, "XDG_CACHE_HOME="+workerstest.OutsideDir(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox", ""}, "read-only\tcommands change nothing|workspace-write\tcommands change the project only (the default)|danger-full-access\tno sandbox"},
		{[]string{"--output-format", ""}, "text|json|stream-json"},
		{[]string{"run", "--agent", "c"}, "claude|codex|opencode|gemini|exec:"},
	} {
		if got := strings.Join(complete(t, dir, env, tc.args...), "|"); got != tc.want {
			t.Errorf("__complete %q = %q, want %q", tc.args, got, tc.want)
		}
	}

	srv := inlineServer(t, `{"name":"models","model":"fake-coder","responses":[{"text":"noted"}]}`)
	modelEnv := append(slices.Clone(env), "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, modelEnv, nil, "--model", "fake-coder", "remember the parser"); r.code != 0 {
		t.Fatalf("one-shot: exit %d: %s", r.code, r.stderr)
	}
	ids := complete(t, dir, env, "--resume=")
	if len(ids) != 1 || !strings.HasSuffix(ids[0], "\tremember the parser") {
		t.Errorf("--resume= completes %q, want the session described by its first prompt", ids)
	}
	if next := complete(t, dir, env, "--resume", ""); strings.Join(next, "|") != strings.Join(ids, "|") {
		t.Errorf("--resume ID completes %q, want %q", next, ids)
	}
	if got := complete(t, dir, modelEnv, "--model", ""); strings.Join(got, "|") != "fake-coder" {
		t.Errorf("--model completes %q, want the endpoint's fake-coder", got)
	}
	asked := len(srv.Requests())
	srv.Close()
	if got := complete(t, dir, modelEnv, "--model", ""); strings.Join(got, "|") != "fake-coder" || len(srv.Requests()) != asked {
		t.Errorf("--model with the endpoint gone completes %q, want the cached fake-coder", got)
	}
}

// TestConfigKeyTypoSuggested: a mistyped setting in a config file is
// answered with the setting it was near, and the list of known settings
// holds those it used to leave out.
func TestConfigKeyTypoSuggested(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("modle = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "hello")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown setting "modle"; did you mean "model"?`) {
		t.Fatalf("exit %d, %q; want exit 2 and the setting it was near", r.code, r.stderr)
	}
	for _, k := range []string{"plans_dir", "review", "answer_timeout", "engine.name", "agents.<kind>.model", "gemini"} {
		if !strings.Contains(r.stderr, k) {
			t.Errorf("the known settings leave out %s: %q", k, r.stderr)
		}
	}
}
