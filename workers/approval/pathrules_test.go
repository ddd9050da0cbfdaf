package approval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

// TestEditDenyRulesHoldAtTheRootAndByAbsolutePath: Edit(**/secret.txt)
// and Edit(**/*.txt) refuse a secret.txt at the project's top, and
// Edit(//<root>/secret.txt) refuses it by its absolute path, whether the
// tool names it as the model did or as it resolves; a bare Write refuses
// every write, an added directory's too.
func TestEditDenyRulesHoldAtTheRootAndByAbsolutePath(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	for _, rule := range []string{"Edit(**/secret.txt)", "Edit(**/*.txt)", "Edit(//" + strings.TrimPrefix(filepath.Join(root, "secret.txt"), "/") + ")", "Edit(" + filepath.Join(root, "secret.txt") + ")", "Edit(/secret.txt)"} {
		r, err := SettingsRule(SettingsDeny, rule, "~/.claude/settings.json")
		if err != nil {
			t.Fatal(err)
		}
		p := New(Options{Root: root, Tools: r, Yes: true})
		for _, paths := range [][]string{{"secret.txt"}, {"link", "secret.txt"}, {filepath.Join(root, "secret.txt")}} {
			d := p.ApproveWrite(ctx, tools.ToolEditFile, paths...)
			if d.Allowed || !strings.Contains(d.Reason, rule) {
				t.Errorf("%s: an edit of %q was allowed (%s)", rule, paths, d.Reason)
			}
		}
		if d := p.ApproveWrite(ctx, tools.ToolEditFile, "other.go"); !d.Allowed {
			t.Errorf("%s: an edit of other.go was refused: %s", rule, d.Reason)
		}
	}
	r, err := SettingsRule(SettingsDeny, "Write", "~/.claude/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: root, Tools: r, Yes: true})
	if d := p.ApproveWrite(ctx, tools.ToolWriteFile, "/elsewhere/added/x.txt"); d.Allowed {
		t.Error("a bare Write rule let a write through")
	}
}

// TestPathRulesOfAHomeInTheRule: ~/ in a rule is the home directory the
// policy is given.
func TestPathRulesOfAHomeInTheRule(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	r, err := SettingsRule(SettingsAsk, "Edit(~/proj/**)", "~/.claude/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: root, Tools: r, Home: home, NeverAsk: true})
	if d := p.ApproveWrite(context.Background(), tools.ToolEditFile, filepath.Join(home, "proj", "a.go")); d.Allowed {
		t.Error("an ask rule under ~/ did not ask")
	}
}
