package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// Issue 69's commands: a real public plugin's /commit (duyet's commit
// plugin, MIT, public-plugins/duyet-claude-plugins in memory/fixtures) whose
// allowed-tools pre-approve its own !`git …` lines and the model's git
// add and git commit when the person installed it, and nothing when the
// same file lies in the project; ```! blocks and ${CLAUDE_PLUGIN_ROOT};
// codex's prompts with /prompts:NAME, $1 and KEY=value.

// commitPlugin copies duyet's commit plugin, unchanged, to a directory
// outside the project, as the person would have it.
func commitPlugin(t *testing.T, base string) string {
	t.Helper()
	dst := filepath.Join(base, "plugins", "commit")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-R", fixtures.Path(t, "public-plugins", "duyet-claude-plugins", "commit"), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// readOnlyGit is the person's ~/.claude/settings.json allowing the
// read-only git commands the command's other lines run (git diff, git
// branch, git log), which Claude Code allows without a rule as
// read-only and ralph does not: its allowed-tools must allow git status
// and the model's git add and git commit.
const readOnlyGit = `{"permissions":{"allow":["Bash(git diff:*)","Bash(git branch:*)","Bash(git log:*)"]}}`

// commitScenario is the model committing in one call, then answering.
const commitScenario = `{"name":"commit","responses":[
 {"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"git add -A && git commit -q -m 'feat(feature): add the feature'\"}"}]},
 {"text":"Committed."}]}`

// TestPersonsCommitCommandIsPreApproved: `ralph '/commit'` with the
// person's plugin runs its git lines and the model's commit without -y
// and with nobody to ask (CI), as `claude -p '/commit'` does.
func TestPersonsCommitCommandIsPreApproved(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commitScenario)
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), readOnlyGit)
	plugin := commitPlugin(t, filepath.Dir(home))
	env := attackEnv(t, home, srv.URL, []string{"CI=true"})
	if r := ralph(t, proj, env, nil, "plugin", "add", plugin); r.code != 0 {
		t.Fatalf("plugin add: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	mustWrite(t, filepath.Join(proj, "feature.txt"), "FEATURE-c0m\n")

	r := ralph(t, proj, env, nil, "/commit")
	if r.code != 0 {
		t.Fatalf("/commit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatalf("nothing was sent\n%s", r.stderr)
	}
	first := string(reqs[0].Body)
	for _, want := range []string{"feature.txt", "Current branch: main", "Recent commits: "} {
		if !strings.Contains(first, want) {
			t.Errorf("the message lacks %q (the git lines' output):\n%s", want, first)
		}
	}
	if strings.Contains(first, "!`git status`") {
		t.Errorf("a git line was sent as written:\n%s", first)
	}
	if log := shIn(t, proj, "git log --oneline -1"); !strings.Contains(log, "feat(feature): add the feature") {
		t.Fatalf("the model's commit did not run (git log: %q)\n%s", log, r.stderr)
	}
	if !strings.Contains(r.stderr, "allow its matching commands for this turn") {
		t.Errorf("the pre-approval was not said:\n%s", r.stderr)
	}
}

// TestProjectsCommitCommandIsNotPreApproved: the same file in the
// project's .claude/commands is text the model could have written: its
// allowed-tools allow nothing, said in one line, and with nobody to ask
// the command sends nothing.
func TestProjectsCommitCommandIsNotPreApproved(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commitScenario)
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), readOnlyGit)
	data, err := os.ReadFile(fixtures.Path(t, "public-plugins", "duyet-claude-plugins", "commit", "commands", "commit.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(proj, ".claude", "commands", "commit.md"), string(data))
	mustWrite(t, filepath.Join(proj, "feature.txt"), "FEATURE-c0m\n")

	r := ralph(t, proj, attackEnv(t, home, srv.URL, []string{"CI=true"}), nil, "/commit")
	if r.code == 0 || len(srv.Requests()) != 0 {
		t.Fatalf("a project's /commit ran with nobody to approve it: exit %d, %d requests\n%s", r.code, len(srv.Requests()), r.stderr)
	}
	if !strings.Contains(r.stderr, "approve none of its commands in advance") || !strings.Contains(r.stderr, "was not run") {
		t.Errorf("the refusal did not say why:\n%s", r.stderr)
	}
	if log := shIn(t, proj, "git log --oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("something was committed:\n%s", log)
	}
}

// loopCommand is a command in the shape of duyet's ralph-wiggum
// ralph-loop.md (not copied: that plugin's loop needs its Stop hook): a
// ```! block running the plugin's own script by ${CLAUDE_PLUGIN_ROOT},
// which its allowed-tools allow, and the variables in the text.
const loopCommand = "---\ndescription: Start the loop\nallowed-tools: [\"Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh:*)\"]\n---\n\n# Loop\n\n```!\n\"${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh\" $ARGUMENTS\n```\n\nThe plugin lives in ${CLAUDE_PLUGIN_ROOT}; the project is $CLAUDE_PROJECT_DIR.\n"

// TestCommandBlockAndPluginRoot: a plugin's ```! block runs before the
// message is sent (under -y, as a !` line does where nobody is asked),
// its output in the block's place, with ${CLAUDE_PLUGIN_ROOT} the
// plugin's directory, one with a space in its name, quoted for the
// shell. (Its allowed-tools cannot allow the block: ralph's rules never
// match a quoted command name.)
func TestCommandBlockAndPluginRoot(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"loop","loop":true,"responses":[{"text":"Looping."}]}`)
	proj, home := attackLayout(t)
	plugin := filepath.Join(filepath.Dir(home), "plugins", "loop kit")
	mustWrite(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name":"loop-kit"}`)
	mustWrite(t, filepath.Join(plugin, "commands", "start-loop.md"), loopCommand)
	mustWrite(t, filepath.Join(plugin, "scripts", "setup.sh"), "#!/bin/sh\necho \"SETUP-RAN with $1 $2\"\n")
	if err := os.Chmod(filepath.Join(plugin, "scripts", "setup.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := attackEnv(t, home, srv.URL, []string{"CI=true"})
	if r := ralph(t, proj, env, nil, "plugin", "add", plugin); r.code != 0 {
		t.Fatalf("plugin add: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := ralph(t, proj, env, nil, "-y", "/start-loop fix-tests 7")
	if r.code != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("/start-loop: exit %d, %d requests\n%s\n%s", r.code, len(srv.Requests()), r.stdout, r.stderr)
	}
	msgs := srv.Requests()[0].Request.Messages
	sent := msgs[len(msgs)-1].Content
	for _, want := range []string{"SETUP-RAN with fix-tests 7", "The plugin lives in " + plugin + ";", "the project is " + proj + "."} {
		if !strings.Contains(sent, want) {
			t.Errorf("the message lacks %q:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "```") || strings.Contains(sent, "CLAUDE_") {
		t.Errorf("the block or a variable was sent as written:\n%s", sent)
	}
}

// TestCodexPromptsWithNamedArguments: codex's custom prompts as codex
// runs them: /prompts:NAME and /NAME, $1, named $KEY from KEY=value, $$
// kept as two dollars (codex's expand_numeric_placeholders copies it as
// it is, and nothing after it is a placeholder), and a missing key an
// error naming it, with nothing sent.
func TestCodexPromptsWithNamedArguments(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"prompts","loop":true,"responses":[{"text":"ok"}]}`)
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".codex", "prompts", "fix-issue.md"), "---\ndescription: Fix an issue\n---\nFix issue #$1 at priority $2; the budget is $$5.\n")
	mustWrite(t, filepath.Join(home, ".codex", "prompts", "scan.md"), "Scan $FILES at depth $DEPTH for $ARGUMENTS-free reasons, and say $$DEPTH.\n")
	env := attackEnv(t, home, srv.URL, []string{"CI=true", "CODEX_HOME="})
	last := func() string {
		reqs := srv.Requests()
		msgs := reqs[len(reqs)-1].Request.Messages
		return msgs[len(msgs)-1].Content
	}
	for _, c := range []struct{ line, want string }{
		{"/prompts:fix-issue 12 high", "Fix issue #12 at priority high; the budget is $$5."},
		{"/fix-issue 13 low", "Fix issue #13 at priority low; the budget is $$5."},
		{`/prompts:scan FILES="src/a.go src/b.go" DEPTH=2`, "Scan src/a.go src/b.go at depth 2"},
	} {
		n := len(srv.Requests())
		r := ralph(t, proj, env, nil, c.line)
		if r.code != 0 || len(srv.Requests()) != n+1 {
			t.Fatalf("%s: exit %d\n%s", c.line, r.code, r.stderr)
		}
		if got := last(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s sent %q, want it to begin %q", c.line, got, c.want)
		}
	}
	if got := last(); !strings.HasSuffix(strings.TrimSpace(got), "say $$DEPTH.") {
		t.Errorf("$$DEPTH is not kept as it is written: %q", got)
	}
	n := len(srv.Requests())
	r := ralph(t, proj, env, nil, "/prompts:scan FILES=src")
	if r.code == 0 || len(srv.Requests()) != n || !strings.Contains(r.stderr, "DEPTH") {
		t.Errorf("a missing key: exit %d, %d requests sent, stderr:\n%s", r.code, len(srv.Requests())-n, r.stderr)
	}
}
