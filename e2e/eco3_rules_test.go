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
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	var system string
	for _, m := range reqs[0].Request.Messages {
		if m.Role == "system" {
			system += m.Content
		}
	}
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
