//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The end-to-end tests of issue 90's items 1 and 2, the person's own
// setup as Claude Code reads it: a SessionStart hook exports variables
// for the session's later commands through $CLAUDE_ENV_FILE (Claude
// Code's hooks reference: `echo 'export NODE_ENV=production' >>
// "$CLAUDE_ENV_FILE"`), and the `env` of ~/.claude/settings.json reaches
// the commands. Both go through the one credential rule: a token a hook
// exports is withheld and named. Run in the attack layout (HOME and
// TMPDIR outside the project), in each sandbox mode. Linux only: the
// sandbox modes are Linux's.

// envHookScript is a SessionStart hook as the hooks reference writes one:
// it appends export lines to $CLAUDE_ENV_FILE when it is set.
const envHookScript = `#!/bin/sh
if [ -n "$CLAUDE_ENV_FILE" ]; then
  echo 'export FOO=bar' >> "$CLAUDE_ENV_FILE"
  echo 'export PATH="$HOME/shim:$PATH"' >> "$CLAUDE_ENV_FILE"
  echo 'export GITHUB_TOKEN=ghp_notarealtokenbutlongenough1234' >> "$CLAUDE_ENV_FILE"
fi
`

// TestEco3EnvFileReachesCommands: the hook's FOO and PATH shim reach a
// later run_command, GITHUB_TOKEN does not and the person is told its
// name, and the settings' DISABLE_TELEMETRY reaches the command too.
func TestEco3EnvFileReachesCommands(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			hook := filepath.Join(home, ".claude", "hooks", "env.sh")
			mustWrite(t, hook, envHookScript)
			// The shim the PATH export puts first: `gh` that says where
			// it ran from.
			mustWrite(t, filepath.Join(home, "shim", "gh"), "#!/bin/sh\necho shimmed-gh\n")
			if err := os.Chmod(filepath.Join(home, "shim", "gh"), 0o755); err != nil {
				t.Fatal(err)
			}
			settings := `{"env":{"DISABLE_TELEMETRY":"1","BASH_DEFAULT_TIMEOUT_MS":300000,"ANTHROPIC_BASE_URL":"http://127.0.0.1:9"},` +
				`"hooks":{"SessionStart":` + hookGroup("", "sh "+hook) + `}}`
			mustWrite(t, filepath.Join(home, ".claude", "settings.json"), settings)
			srv := inlineServer(t, toolScenario(t, "env", [][]toolCall{
				{{"run_command", `{"command":"echo foo=$FOO tel=$DISABLE_TELEMETRY ms=$BASH_DEFAULT_TIMEOUT_MS tok=${GITHUB_TOKEN:-none} base=${ANTHROPIC_BASE_URL:-none}; gh"}`}},
			}, "done"))
			envv := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, envv, nil, "-y", "--no-wait", "show the environment")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			res := hookedResults(srv)
			if len(res) != 1 {
				t.Fatalf("results the model read: %q", res)
			}
			for _, want := range []string{"foo=bar", "tel=1", "ms=300000", "tok=none", "base=none", "shimmed-gh"} {
				if !strings.Contains(res[0], want) {
					t.Errorf("the command's output %q lacks %q", res[0], want)
				}
			}
			if sentToModel(srv, "ghp_notarealtoken") {
				t.Error("the token the hook exported reached the model")
			}
			if !strings.Contains(r.stderr, "withheld GITHUB_TOKEN from commands") {
				t.Errorf("the person was not told GITHUB_TOKEN was withheld: %s", r.stderr)
			}
			if !strings.Contains(r.stderr, "env of ~/.claude/settings.json but ANTHROPIC_BASE_URL") {
				t.Errorf("the person was not told ANTHROPIC_BASE_URL was withheld: %s", r.stderr)
			}
			// The file was ralph's, in the temporary directory, and is gone.
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(home), "tmp", "*", "ralph-env-*"))
			more, _ := filepath.Glob(filepath.Join(filepath.Dir(home), "tmp", "ralph-env-*"))
			if len(left)+len(more) > 0 {
				t.Errorf("the environment file was left behind: %v %v", left, more)
			}
		})
	}
}

// TestEco3PersonClaudeMdBeforeTheProjects: ~/.claude/CLAUDE.md (the
// person's instructions for every project, Claude Code's user memory)
// reaches the system prompt before the project's CLAUDE.md; its import
// outside the project waits for instruction_links, as every import does.
func TestEco3PersonClaudeMdBeforeTheProjects(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "CLAUDE.md"), "# Mine\nPERSON-RULE-7: answer in British English.\n@~/.claude/more.md\n")
	mustWrite(t, filepath.Join(home, ".claude", "more.md"), "PERSON-IMPORT-8\n")
	mustWrite(t, filepath.Join(proj, "CLAUDE.md"), "PROJECT-RULE-9: run make test.\n")
	srv := inlineServer(t, `{"name":"hi","responses":[{"text":"hello"}]}`)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	system := systemPrompt(t, srv)
	i, j := strings.Index(system, "PERSON-RULE-7"), strings.Index(system, "PROJECT-RULE-9")
	if i < 0 || j < 0 || i > j {
		t.Fatalf("the person's rule at %d, the project's at %d in the system prompt: want both, the person's first", i, j)
	}
	if strings.Contains(system, "PERSON-IMPORT-8") {
		t.Error("an import outside the project reached the prompt without instruction_links")
	}
	if !strings.Contains(r.stderr, "instruction_links") {
		t.Errorf("the person was not told how to allow the import: %s", r.stderr)
	}
}

// TestEco3LinkedPersonAgentsFolder: awesome-claude-agents installed as
// its README recommends, its agents folder linked into ~/.claude/agents,
// gives its agents (the system prompt names them); the same link under
// the project's .claude/agents gives none.
func TestEco3LinkedPersonAgentsFolder(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	clone := filepath.Join(filepath.Dir(home), "src", "awesome-claude-agents", "agents")
	def := func(name string) string {
		return "---\nname: " + name + "\ndescription: MUST BE USED for " + name + " work.\ntools: Read, Grep\n---\nYou are " + name + ".\n"
	}
	mustWrite(t, filepath.Join(clone, "core", "code-reviewer.md"), def("code-reviewer"))
	mustWrite(t, filepath.Join(clone, "universal", "backend-developer.md"), def("backend-developer"))
	other := filepath.Join(filepath.Dir(home), "src", "other-agents")
	mustWrite(t, filepath.Join(other, "project-linked-agent.md"), def("project-linked-agent"))
	for _, l := range [][2]string{{clone, filepath.Join(home, ".claude", "agents", "awesome-claude-agents")}, {other, filepath.Join(proj, ".claude", "agents", "linked")}} {
		if err := os.MkdirAll(filepath.Dir(l[1]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	srv := inlineServer(t, `{"name":"hi","responses":[{"text":"hello"}]}`)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"code-reviewer", "backend-developer"} {
		if !sentToModel(srv, name) {
			t.Errorf("agent %s of the linked folder did not reach the model; stderr %s", name, r.stderr)
		}
	}
	if sentToModel(srv, "project-linked-agent") {
		t.Error("an agent under a link in the project's .claude/agents reached the model")
	}
}

// TestEco3PermissionLineOncePerChange: a real ~/.claude/settings.json
// with seventeen Read(…) deny rules is said in one line at the first
// start, in none at the next while nothing changed, and in one again
// once a rule is added.
func TestEco3PermissionLineOncePerChange(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	rules := []string{"Read(~/.ssh/**)", "Read(~/.aws/**)", "Read(~/.gnupg/**)", "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)",
		"Read(~/.config/gh/**)", "Read(~/.npmrc)", "Read(~/.git-credentials)", "Read(~/.docker/config.json)", "Read(~/.kube/**)",
		"Read(//etc/shadow)", "Read(~/Library/Keychains/**)", "Read(**/*.pem)", "Read(**/*.key)", "Read(~/.netrc)", "Read(~/.pypirc)"}
	settings := func(rules []string) {
		b, _ := json.Marshal(rules)
		mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"deny":`+string(b)+`}}`)
	}
	start := func() []string {
		t.Helper()
		srv := inlineServer(t, `{"name":"hi","responses":[{"text":"hello"}]}`)
		r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "say hi")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var lines []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.Contains(l, "Read(") || strings.Contains(l, "deny rule") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	settings(rules)
	if l := start(); len(l) != 1 || !strings.Contains(l[0], "17 deny rules (17 of them Read(…)") {
		t.Fatalf("first start: %q, want one line of 17 rules", l)
	}
	if l := start(); len(l) != 0 {
		t.Fatalf("second start, nothing changed: %q, want none", l)
	}
	settings(append(rules, "Read(~/.vault-token)"))
	if l := start(); len(l) != 1 || !strings.Contains(l[0], "18 deny rules") {
		t.Fatalf("after a rule was added: %q, want one line of 18 rules", l)
	}
}
