package agents

import (
	"context"
	"strings"
	"testing"
)

func TestExternalEnvScrubbing(t *testing.T) {
	env := testEnv("OPENAI_API_KEY", "sk-openai", "AWS_SECRET_ACCESS_KEY", "aws-secret", "ANTHROPIC_API_KEY", "sk-ant",
		"GITHUB_TOKEN", "ghp", "MY_DB_PASSWORD", "pw", "CLAUDE_CODE_OAUTH_TOKEN", "oauth", "RALPH_TEST_VISIBLE", "yes")
	run := func(kind Kind, keep ...string) string {
		a := Agent{Kind: kind, Command: fakeAgent(t, "env_dump.sh"), Env: env, KeepEnv: keep}
		if kind == AgentExec {
			a.Command = "bash " + a.Command
		}
		res, _, err := runAgent(t, context.Background(), a, "")
		if err != nil {
			t.Fatal(err)
		}
		return "\n" + res.Text + "\n"
	}
	has := func(out, kv string) bool { return strings.Contains(out, "\n"+kv+"\n") }

	out := run(AgentExec)
	for _, gone := range []string{"OPENAI_API_KEY=", "AWS_SECRET_ACCESS_KEY=", "ANTHROPIC_API_KEY=", "GITHUB_TOKEN=", "MY_DB_PASSWORD=", "CLAUDE_CODE_OAUTH_TOKEN="} {
		if strings.Contains(out, "\n"+gone) {
			t.Errorf("exec agent got %s", gone)
		}
	}
	if !has(out, "RALPH_TEST_VISIBLE=yes") || !strings.Contains(out, "\nPATH=") {
		t.Errorf("exec agent lost ordinary variables:%s", out)
	}

	out = run(AgentClaude, "GITHUB_TOKEN")
	if !has(out, "ANTHROPIC_API_KEY=sk-ant") || !has(out, "CLAUDE_CODE_OAUTH_TOKEN=oauth") || !has(out, "GITHUB_TOKEN=ghp") {
		t.Errorf("claude agent lost what it needs or KeepEnv:%s", out)
	}
	if strings.Contains(out, "\nOPENAI_API_KEY=") || strings.Contains(out, "\nAWS_SECRET_ACCESS_KEY=") {
		t.Errorf("claude agent got another provider's secret")
	}

	out = run(AgentCodex, "MY_DB_*")
	if !has(out, "OPENAI_API_KEY=sk-openai") || !has(out, "MY_DB_PASSWORD=pw") || strings.Contains(out, "\nANTHROPIC_API_KEY=") {
		t.Errorf("codex agent environment wrong:%s", out)
	}
}

func TestExternalScrubEnvRule(t *testing.T) {
	in := []string{"HOME=/h", "PATH=/bin", "NPM_TOKEN=1", "GH_TOKEN=2", "stripe_api_key=3", "AWS_REGION=eu", "TOKEN=4",
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "SSH_AUTH_SOCK=/s", "TERM=xterm", "LANG=C"}
	got := strings.Join(scrubEnv(in, nil, []string{"AWS_REGION"}), " ")
	if got != "HOME=/h PATH=/bin AWS_REGION=eu SSH_AUTH_SOCK=/s TERM=xterm LANG=C" {
		t.Fatalf("scrubEnv = %s", got)
	}
}
