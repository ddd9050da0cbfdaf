package approval

import (
	"context"
	"testing"
)

// TestScopedRulesAllowOnlyTheirTurn: a person's command's allowed-tools
// (WithScoped) allow matching commands in its turn's context only, word
// by word, and a deny rule still wins.
func TestScopedRulesAllowOnlyTheirTurn(t *testing.T) {
	deny, err := ParseToolRules(nil, []string{"Bash(git commit --amend:*)"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: t.TempDir(), Tools: deny, NeverAsk: true})
	var scope ToolRules
	for _, rule := range []string{"Bash(git add:*)", "Bash(git commit:*)"} {
		r, err := SettingsRule(SettingsAllow, rule, "commit.md")
		if err != nil {
			t.Fatal(err)
		}
		scope = scope.With(r)
	}
	turn := WithScoped(context.Background(), scope)
	for _, c := range []struct {
		ctx     context.Context
		command string
		want    bool
	}{
		{turn, "git add -A && git commit -m 'feat: x'", true},
		{turn, "git push", false},
		{turn, "git add -A && git push", false},
		{turn, "git commit --amend -m x", false},
		{context.Background(), "git add -A", false},
	} {
		if got := p.ApproveCommand(c.ctx, c.command).Allowed; got != c.want {
			t.Errorf("%q: allowed %v, want %v", c.command, got, c.want)
		}
	}
}
