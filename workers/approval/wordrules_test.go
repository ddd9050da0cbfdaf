package approval

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Bash allow rules from a settings file or --allowed-tools allow what
// Claude Code allows for them, word by word, and no more.
func TestWordRulesAllow(t *testing.T) {
	for _, tc := range []struct {
		rule string
		cmd  string
		want bool
	}{
		{"Bash(npm run test:*)", "npm run test", true},
		{"Bash(npm run test:*)", "npm run test -- -v", true},
		{"Bash(npm run test:*)", "npm run test2", false},
		{"Bash(npm run test:*)", "npm run build", false},
		{"Bash(npm run test *)", "npm run test --watch", true},
		{"Bash(git diff:*)", "git diff --stat", true},
		{"Bash(git diff:*)", "git status", false},
		{"Bash(rm foo.txt)", "rm foo.txt", true},
		{"Bash(rm foo.txt)", "rm -rf src", false},
		{"Bash(rm foo.txt)", "rm foo.txt bar.txt", false},
		{"Bash(ls)", "ls", true},
		{"Bash(ls)", "ls -la", false},
		{"Bash(ls)", "ls; curl x | sh", false},
		{"Bash(ls:*)", "ls -la", true},
		{"Bash(ls:*)", "lsof", false},
		{"Bash(git commit:*)", "git commit -m x", true},
		{"Bash(git commit:*)", "git commit --amend && git push", false},
		{`Bash(echo "a b":*)`, `echo "a b" c`, true},
		{`Bash(echo "a b":*)`, `echo 'a b'`, true},
		{`Bash(echo "a b":*)`, "echo a b", false},
		{"Bash(ls -la)", "ls   -la", true},
		{"Bash(cat:*)", "cat ~/.bashrc", false}, // outside the project: asked whatever the rule
		{"Bash(npm:*)", "npm run build", true},
		{"Bash", "npm run build", true},
	} {
		r, err := ParseToolRules([]string{tc.rule}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
		if d := p.ApproveCommand(context.Background(), tc.cmd); d.Allowed != tc.want {
			t.Errorf("%s, %q: allowed %v, want %v (%s)", tc.rule, tc.cmd, d.Allowed, tc.want, d.Reason)
		}
	}
}

// A rule naming a command no rule ever covers (a shell, env, xargs) is
// refused as today, and a pattern that is not one plain command too.
func TestWordRulesRefused(t *testing.T) {
	for _, rule := range []string{"Bash(xargs:*)", "Bash(env FOO=1 ls)", "Bash(bash -c ls)", "Bash(ls; pwd)", "Bash(ls | wc)", "Bash(ls > x)", "Bash(echo $HOME)", "Bash(:*)"} {
		if r, err := ParseToolRules([]string{rule}, nil); err == nil {
			t.Errorf("%s was accepted: %+v", rule, r)
		}
	}
}

// The remembered rules "always" gives keep their form: "git diff" allows
// every git diff; and the rerun hint suggests a rule that, written,
// allows what was refused.
func TestWordRulesRememberedAndHint(t *testing.T) {
	r, err := ParseToolRules([]string{"Bash(ls)", "Bash(npm run test:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, UserRules: []string{"git diff"}, NeverAsk: true})
	if !p.Allowed("git diff --stat HEAD") {
		t.Error("remembered rule git diff did not allow git diff --stat")
	}
	for cmd, want := range map[string][]string{
		"ls -la":                       {"ls"},
		"npm run test && npm run lint": {"npm run"},
		"ls && git diff":               nil,
	} {
		if got := p.Question(cmd).Remember; !slices.Equal(got, want) {
			t.Errorf("%q: remember %q, want %q", cmd, got, want)
		}
	}
	hint := p.HintFor("ls -la", "npm run build")
	if !strings.Contains(hint, "'Bash(ls:*) Bash(npm run:*)'") {
		t.Fatalf("hint = %s", hint)
	}
	written, err := ParseToolRules([]string{"Bash(ls:*) Bash(npm run:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := New(Options{Root: t.TempDir(), Tools: written, NeverAsk: true})
	for _, cmd := range []string{"ls -la", "npm run build"} {
		if !q.Allowed(cmd) {
			t.Errorf("the hint's rules do not allow %q", cmd)
		}
	}
}

// Deny rules refuse at least what they refused before (ask_before's
// matching of the pattern's words) and also every command the rule's
// words begin, as Claude Code's prefix: an exact deny is never narrower
// than its prefix, and quoting does not let a command through.
func TestWordRulesDeny(t *testing.T) {
	for _, tc := range []struct {
		rule string
		cmd  string
		want bool // refused
	}{
		{"Bash(rm foo.txt)", "rm foo.txt", true},
		{"Bash(rm foo.txt)", "rm -f foo.txt", true}, // today's matching, kept
		{"Bash(rm foo.txt)", "rm bar.txt", false},
		{"Bash(git push:*)", "git push origin main", true},
		{"Bash(git push:*)", "ls && git push", true},
		{`Bash(echo "a b":*)`, `echo "a b" c`, true},
		{`Bash(echo "a b":*)`, `bash -c 'echo "a b"'`, true},
		{"Bash(npm run test:*)", "npm run build", false},
	} {
		r, err := ParseToolRules([]string{"Bash"}, []string{tc.rule})
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		p := New(Options{Root: t.TempDir(), Tools: r, NeverAsk: true})
		if d := p.ApproveCommand(context.Background(), tc.cmd); d.Allowed == tc.want {
			t.Errorf("deny %s, %q: allowed %v (%s)", tc.rule, tc.cmd, d.Allowed, d.Reason)
		}
	}
}

// An external agent takes the person's prefix rules of plain words, and
// never an exact rule widened to a prefix.
func TestWordRulesForAgents(t *testing.T) {
	r, err := ParseToolRules([]string{"Bash(npm run test:*)", "Bash(ls)", `Bash(echo "a b":*)`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: r, UserRules: []string{"git diff"}})
	if got, want := p.Rules(), []string{"git diff", "npm run test"}; !slices.Equal(got, want) {
		t.Fatalf("rules = %q, want %q", got, want)
	}
}
