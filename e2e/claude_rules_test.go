//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The end-to-end test of Claude Code's rules directories (its memory
// docs): the person's ~/.claude/rules and the project's .claude/rules,
// markdown files in subdirectories, a rule with paths front matter for
// the files it matches. Run in the attack layout (HOME and TMPDIR
// outside the project). Linux only: the attack layout's sandbox is.

// TestEco3RulesReachTheSystemPrompt: the person's rules follow their
// ~/.claude/CLAUDE.md, a rules folder linked from their dotfiles
// included, before the project's CLAUDE.md and its rules; a paths rule
// reaches the prompt headed by its globs, without its front matter; a
// link under the project's rules to a file outside it does not, and the
// person is told.
func TestEco3RulesReachTheSystemPrompt(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "CLAUDE.md"), "PERSON-MEMORY-1\n")
	mustWrite(t, filepath.Join(home, ".claude", "rules", "style.md"), "# Style\nPERSON-RULE-2: prefer early returns.\n")
	dotfiles := filepath.Join(filepath.Dir(home), "dotfiles", "rules")
	mustWrite(t, filepath.Join(dotfiles, "go.md"), "---\npaths:\n  - \"**/*.go\"\n---\nPERSON-LINKED-RULE-3\n")
	mustWrite(t, filepath.Join(proj, "CLAUDE.md"), "PROJECT-MEMORY-4\n")
	mustWrite(t, filepath.Join(proj, ".claude", "rules", "api", "validation.md"), "---\npaths: src/api/**/*.ts\n---\nPROJECT-RULE-5: validate input.\n")
	outside := filepath.Join(filepath.Dir(home), "outside.md")
	mustWrite(t, outside, "OUTSIDE-SECRET-6\n")
	for _, l := range [][2]string{
		{dotfiles, filepath.Join(home, ".claude", "rules", "dotfiles")},
		{outside, filepath.Join(proj, ".claude", "rules", "outside.md")},
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	srv := inlineServer(t, `{"name":"hi","responses":[{"text":"hello"}]}`)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	system := systemPrompt(t, srv)
	last := -1
	for _, w := range []string{"PERSON-MEMORY-1", "PERSON-LINKED-RULE-3", "PERSON-RULE-2", "PROJECT-MEMORY-4", "PROJECT-RULE-5"} {
		i := strings.Index(system, w)
		if i < 0 || i < last {
			t.Fatalf("%s at %d, after %d in the system prompt: want the person's memory, their rules, the project's memory, its rules, in that order:\n%s", w, i, last, system)
		}
		last = i
	}
	for _, w := range []string{"applies when working on files matching **/*.go", "applies when working on files matching src/api/**/*.ts"} {
		if !strings.Contains(system, w) {
			t.Errorf("the system prompt lacks %q", w)
		}
	}
	if strings.Contains(system, "OUTSIDE-SECRET-6") || strings.Contains(system, "paths:") {
		t.Error("a link out of the project's rules, or a rule's front matter, reached the system prompt")
	}
	if !strings.Contains(r.stderr, ".claude/rules/outside.md is a link") {
		t.Errorf("the person was not told of the link left out: %s", r.stderr)
	}
}

// TestEco3ProjectSettingsEnvAfterApproval: the env of the project's
// .claude/settings.json reaches no command until the person approves it
// with `ralph hooks approve` (as Claude Code gives it only in a workspace
// the person trusted); then it reaches the sandboxed commands, but a
// token in it does not, and the person is told its name.
func TestEco3ProjectSettingsEnvAfterApproval(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			mustWrite(t, filepath.Join(proj, ".claude", "settings.json"),
				`{"env":{"PROJ_FLAG":"on","RETRIES":3,"GITHUB_TOKEN":"ghp_notarealtokenbutlongenough1234"}}`)
			show := func() (runResult, string) {
				srv := inlineServer(t, toolScenario(t, "env", [][]toolCall{
					{{"run_command", `{"command":"echo flag=${PROJ_FLAG:-none} retries=${RETRIES:-none} tok=${GITHUB_TOKEN:-none}"}`}},
				}, "done"))
				r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "-y", "--no-wait", "show the environment")
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				res := hookedResults(srv)
				if len(res) != 1 {
					t.Fatalf("results the model read: %q", res)
				}
				if sentToModel(srv, "ghp_notarealtoken") {
					t.Error("the token of the project's env reached the model")
				}
				return r, res[0]
			}
			r, out := show()
			if !strings.Contains(out, "flag=none retries=none tok=none") {
				t.Errorf("before approval the command saw %q", out)
			}
			if !strings.Contains(r.stderr, "env of .claude/settings.json (GITHUB_TOKEN, PROJ_FLAG, RETRIES) only once you approve it") {
				t.Errorf("the person was not told how to give the env: %s", r.stderr)
			}
			ap := ralph(t, proj, attackEnv(t, home, "http://127.0.0.1:9", mode.env), nil, "hooks", "approve")
			if ap.code != 0 || !strings.Contains(ap.stdout, "approved the env of .claude/settings.json") || strings.Contains(ap.stdout, "ghp_") {
				t.Fatalf("hooks approve: exit %d\n%s\n%s", ap.code, ap.stdout, ap.stderr)
			}
			r, out = show()
			if !strings.Contains(out, "flag=on retries=3 tok=none") {
				t.Errorf("after approval the command saw %q", out)
			}
			if !strings.Contains(r.stderr, "env of .claude/settings.json but GITHUB_TOKEN") {
				t.Errorf("the person was not told GITHUB_TOKEN was withheld: %s", r.stderr)
			}
		})
	}
}
