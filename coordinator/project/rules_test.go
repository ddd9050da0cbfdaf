package project

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/instructions"
	"github.com/ralph-dev/ralph/workers/agents"
)

// rulesLayout is a person's home and a project, outside the temporary
// directory the model's commands may write (TMPDIR is moved beside
// them), as Claude Code's memory docs lay rules out: ~/.claude/rules and
// .claude/rules, markdown files in subdirectories, some with paths front
// matter. It returns the home, the project and where the dotfiles live.
func rulesLayout(t *testing.T) (home, proj, dotfiles string) {
	base := t.TempDir()
	home, proj, dotfiles = filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "dotfiles")
	tmp := filepath.Join(base, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", home)
	user := filepath.Join(home, agents.RulesDir)
	write(t, filepath.Join(home, agents.PersonInstructionFile), "PERSON-MEMORY-1\n")
	write(t, filepath.Join(user, "style.md"), "# Style\nUSER-RULE-1: prefer early returns.\n")
	write(t, filepath.Join(user, "go", "tests.md"), "---\npaths:\n  - \"**/*_test.go\"\n  - \"e2e/**\"\n---\n\nUSER-RULE-2: table-driven tests.\n")
	write(t, filepath.Join(dotfiles, "shared", "linked.md"), "USER-RULE-LINKED-3\n")
	write(t, filepath.Join(tmp, "planted.md"), "PLANTED-IN-TMP\n")
	write(t, filepath.Join(proj, "CLAUDE.md"), "PROJECT-MEMORY-4\n")
	write(t, filepath.Join(proj, agents.RulesDir, "api.md"), "---\npaths: src/api/**/*.ts\n---\nPROJECT-RULE-5: validate input.\n")
	write(t, filepath.Join(proj, agents.RulesDir, "frontend", "react.md"), "PROJECT-RULE-6\n")
	write(t, filepath.Join(dotfiles, "secret", "secret.md"), "PROJECT-LINKED-SECRET\n")
	for _, l := range [][2]string{
		{filepath.Join(dotfiles, "shared"), filepath.Join(user, "shared")},
		{filepath.Join(tmp, "planted.md"), filepath.Join(user, "planted.md")},
		{filepath.Join(dotfiles, "secret"), filepath.Join(proj, agents.RulesDir, "secret")},
		{filepath.Join(dotfiles, "secret", "secret.md"), filepath.Join(proj, agents.RulesDir, "one.md")},
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj, dotfiles
}

// openRules opens proj as a one-shot session and collects its notices.
func openRules(t *testing.T, home, proj string) (*Project, func() []string) {
	var mu sync.Mutex
	var said []string
	p, err := Open(context.Background(), Options{Dir: proj, Mode: ModeOneShot, Yes: true,
		Getenv: func(k string) string {
			switch k {
			case "HOME":
				return home
			case "XDG_CONFIG_HOME":
				return filepath.Join(home, ".config")
			case "XDG_STATE_HOME":
				return filepath.Join(home, ".state")
			case "OPENAI_BASE_URL":
				return "http://127.0.0.1:9/v1"
			}
			return ""
		},
		Notify: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), said...) }
}

// TestRulesReachThePromptInTheirPlace: the person's rules follow their
// ~/.claude/CLAUDE.md, a linked folder of theirs included, before the
// project's instructions; the project's rules follow the project's
// CLAUDE.md; a rule with paths is given with the files it applies to
// and without its front matter; a link under the project's rules is not
// followed, nor a person's rule that lies in the temporary directory,
// and both are said. Not parallel: it sets HOME and TMPDIR, which
// os.UserHomeDir and the sandbox's temporary directories read.
func TestRulesReachThePromptInTheirPlace(t *testing.T) {
	home, proj, _ := rulesLayout(t)
	p, said := openRules(t, home, proj)
	got := p.instructions.Text()
	order := []string{"PERSON-MEMORY-1", "USER-RULE-2", "USER-RULE-LINKED-3", "USER-RULE-1", "PROJECT-MEMORY-4", "PROJECT-RULE-5", "PROJECT-RULE-6"}
	last := -1
	for _, w := range order {
		i := strings.Index(got, w)
		if i < 0 || i < last {
			t.Fatalf("%s at %d, after %d: want %v in that order in\n%s", w, i, last, order, got)
		}
		last = i
	}
	for _, w := range []string{"PLANTED-IN-TMP", "PROJECT-LINKED-SECRET", "paths:", "---\n\nUSER"} {
		if strings.Contains(got, w) {
			t.Errorf("the prompt holds %q:\n%s", w, got)
		}
	}
	for _, w := range []string{
		"(this rule applies when working on files matching **/*_test.go, e2e/**)\nUSER-RULE-2",
		"(this rule applies when working on files matching src/api/**/*.ts)\nPROJECT-RULE-5",
		"--- ~/.claude/rules/shared/linked.md ---",
		"--- .claude/rules/frontend/react.md ---",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("the prompt lacks %q:\n%s", w, got)
		}
	}
	notices := strings.Join(said(), "\n")
	for _, w := range []string{"planted.md lies where the model can write", ".claude/rules/secret is a link", ".claude/rules/one.md is a link"} {
		if !strings.Contains(notices, w) {
			t.Errorf("the person was not told %q: %s", w, notices)
		}
	}
}

// TestProjectRulesFolderAsALinkIsLeftOut: a project whose .claude/rules
// is a link (to the person's own rules, say) gives none of them as the
// project's, and says so. Not parallel: it sets HOME and TMPDIR.
func TestProjectRulesFolderAsALinkIsLeftOut(t *testing.T) {
	home, proj, dotfiles := rulesLayout(t)
	rules := filepath.Join(proj, agents.RulesDir)
	if err := os.RemoveAll(rules); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dotfiles, "secret"), rules); err != nil {
		t.Fatal(err)
	}
	p, said := openRules(t, home, proj)
	if got := p.instructions.Text(); strings.Contains(got, "PROJECT-LINKED-SECRET") {
		t.Fatalf("a linked rules folder reached the prompt:\n%s", got)
	}
	if n := strings.Join(said(), "\n"); !strings.Contains(n, ".claude/rules is a link") {
		t.Errorf("the person was not told: %s", n)
	}
}

// TestRulesAreBoundedInNumber: past instructions.MaxRuleFiles files the rest are left
// out, said once. Not parallel: it sets HOME and TMPDIR.
func TestRulesAreBoundedInNumber(t *testing.T) {
	home, proj, _ := rulesLayout(t)
	for i := 0; i < instructions.MaxRuleFiles+5; i++ {
		write(t, filepath.Join(proj, agents.RulesDir, "many", "r"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"), "MANY-RULE\n"+strings.Repeat("y", i)+"\n")
	}
	p, said := openRules(t, home, proj)
	got := p.instructions.Text()
	if n := strings.Count(got, "MANY-RULE"); n == 0 || n > instructions.MaxRuleFiles {
		t.Errorf("%d of the many rules in the prompt, want some and at most %d", n, instructions.MaxRuleFiles)
	}
	if n := strings.Join(said(), "\n"); !strings.Contains(n, "rules files; the rest were left out") {
		t.Errorf("the person was not told of the bound: %s", n)
	}
}
