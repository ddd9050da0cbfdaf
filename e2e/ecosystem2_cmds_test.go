package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 69's commands: a real public plugin's /commit (duyet's commit
// plugin, MIT, testdata/plugins69/duyet-claude-plugins) whose
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
	if out, err := exec.Command("cp", "-R", testdata("plugins69", "duyet-claude-plugins", "commit"), dst).CombinedOutput(); err != nil {
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
	data, err := os.ReadFile(testdata("plugins69", "duyet-claude-plugins", "commit", "commands", "commit.md"))
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
