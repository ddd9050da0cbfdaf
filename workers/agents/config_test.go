package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExternalConfigureMatchesRalphsSettings(t *testing.T) {
	codex := Agent{Kind: AgentCodex, Command: "codex"}
	claude := Agent{Kind: AgentClaude, Command: "claude"}
	rules := []string{"go test", "make"}
	for _, c := range []struct {
		name  string
		agent Agent
		p     Policy
		s     Settings
		extra []string
		want  string
	}{
		{"codex default", codex, Policy{}, Settings{}, nil,
			"--skip-git-repo-check --sandbox workspace-write"},
		{"codex read-only, -y changes nothing", codex, Policy{Sandbox: "read-only", Yes: true, Allowed: rules}, Settings{}, nil,
			"--skip-git-repo-check --sandbox read-only"},
		{"codex settings and --agent-arg", codex, Policy{}, Settings{Args: []string{"-c", "model_reasoning_effort=high"}, Model: "gpt-5-codex"}, []string{"--oss"},
			"--skip-git-repo-check --sandbox workspace-write --model gpt-5-codex -c model_reasoning_effort=high --oss"},
		{"codex: the person's sandbox wins", codex, Policy{}, Settings{}, []string{"--sandbox=danger-full-access", "--skip-git-repo-check", "-m", "o3"},
			"--sandbox=danger-full-access --skip-git-repo-check -m o3"},
		{"codex: sandbox_mode by -c", codex, Policy{}, Settings{Model: "gpt-5"}, []string{"-c", "sandbox_mode=read-only"},
			"--skip-git-repo-check --model gpt-5 -c sandbox_mode=read-only"},
		{"claude default", claude, Policy{Allowed: rules}, Settings{}, nil,
			"--setting-sources user --permission-mode acceptEdits --allowedTools Bash(go test:*) Bash(make:*)"},
		{"claude -y: its own sandbox for Bash", claude, Policy{Yes: true}, Settings{}, nil,
			"--setting-sources user --permission-mode acceptEdits --settings " + claudeSandboxSettings},
		{"claude -y without ralph's sandbox", claude, Policy{Sandbox: "danger-full-access", Yes: true}, Settings{}, nil,
			"--setting-sources user --permission-mode acceptEdits --allowedTools Bash"},
		{"claude read-only: no edits, no rules", claude, Policy{Sandbox: "read-only", Yes: true, Allowed: rules}, Settings{}, nil,
			"--setting-sources user --permission-mode default"},
		{"claude: the person's mode wins", claude, Policy{}, Settings{Model: "opus"}, []string{"--permission-mode", "plan"},
			"--setting-sources user --model opus --permission-mode plan"},
		{"exec: --agent-arg are positional", Agent{Kind: AgentExec, Command: "./a.sh"}, Policy{Yes: true}, Settings{Model: "x"}, []string{"one", "two"},
			"one two"},
	} {
		got := c.agent.Configure(c.p, c.s, c.extra)
		if s := strings.Join(got.Args, " "); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, s, c.want)
		}
	}
	if got := claude.Configure(Policy{}, Settings{Env: []string{"MY_KEY"}}, nil); len(got.KeepEnv) != 1 || got.KeepEnv[0] != "MY_KEY" {
		t.Errorf("KeepEnv = %v", got.KeepEnv)
	}
}

func TestExternalWritesSaysWhatTheAgentMayChange(t *testing.T) {
	for args, want := range map[string]string{
		"codex --sandbox read-only":                  "cannot change any file",
		"codex --sandbox workspace-write":            "may write inside the project",
		"codex --yolo":                               "without a sandbox",
		"codex":                                      "sandbox_mode of its own config",
		"claude --permission-mode acceptEdits":       "other commands need permissions.allow",
		"claude --permission-mode default":           "may change no file",
		"claude --permission-mode=bypassPermissions": "--permission-mode bypassPermissions",
		"claude --permission-mode acceptEdits --settings " + claudeSandboxSettings: "its own sandbox for Bash",
	} {
		f := strings.Fields(args)
		a := Agent{Kind: Kind(f[0]), Args: f[1:]}
		if got := a.Writes(); !strings.Contains(got, want) {
			t.Errorf("%s: Writes = %q, want %q in it", args, got, want)
		}
	}
}

// A variable codex's own config names as a provider's env_key reaches
// codex although it looks like a credential; ralph's own key variable does
// not reach claude whatever its name.
func TestExternalEnvKeepsWhatTheAgentsConfigNames(t *testing.T) {
	codexHome := t.TempDir()
	config := "model = \"gpt-5-codex\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"Fake\"\nbase_url = \"http://127.0.0.1:1/v1\"\nenv_key = \"FAKE_API_KEY\"\n" +
		"[profiles.cheap]\nmodel = \"gpt-5-mini\"\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv("CODEX_HOME", codexHome, "FAKE_API_KEY", "fake-secret", "OTHER_API_KEY", "other", "RALPH_LLM_AUTH", "ralph-secret")
	run := func(kind Kind) string {
		a := Agent{Kind: kind, Command: fakeAgent(t, "env_dump.sh"), Env: env, DropEnv: []string{"RALPH_LLM_AUTH"}}
		res, _, err := runAgent(t, context.Background(), a, "")
		if err != nil {
			t.Fatal(err)
		}
		return "\n" + res.Text + "\n"
	}
	out := run(AgentCodex)
	if !strings.Contains(out, "\nFAKE_API_KEY=fake-secret\n") || strings.Contains(out, "OTHER_API_KEY") || strings.Contains(out, "RALPH_LLM_AUTH") {
		t.Fatalf("codex environment:%s", out)
	}
	out = run(AgentClaude)
	if strings.Contains(out, "FAKE_API_KEY") || strings.Contains(out, "RALPH_LLM_AUTH") {
		t.Fatalf("claude got codex's key or ralph's:%s", out)
	}

	a := Agent{Kind: AgentCodex, Env: env}
	if m := a.Model(); m != "gpt-5-codex" {
		t.Errorf("Model from codex's config = %q", m)
	}
	if a.Args = []string{"-p", "cheap"}; a.Model() != "gpt-5-mini" {
		t.Errorf("Model of the profile = %q", a.Model())
	}
	if a.Args = []string{"--model=o3"}; a.Model() != "o3" {
		t.Errorf("Model of --model = %q", a.Model())
	}
}
