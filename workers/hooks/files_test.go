package hooks

import (
	"slices"
	"testing"
)

func TestNamedFiles(t *testing.T) {
	got := NamedFiles(`node "${CLAUDE_PLUGIN_ROOT}/guard.js" && python3 $CLAUDE_PROJECT_DIR/.claude/hooks/check.py --config=./cfg.json | jq . > /tmp/x; bash scripts/a.sh $HOME/b.sh $(cat c)`,
		"/p", "/plug")
	want := []string{"/p/node", "/plug/guard.js", "/p/python3", "/p/.claude/hooks/check.py", "/p/--config=./cfg.json", "/p/cfg.json", "/p/jq", "/p/bash", "/p/scripts/a.sh", "/p/cat", "/p/c"}
	if !slices.Equal(got, want) {
		t.Fatalf("NamedFiles = %q, want %q", got, want)
	}
	if got := NamedFiles(`/bin/cat ../outside /etc/passwd`, "/p", ""); len(got) != 0 {
		t.Fatalf("files outside the roots are no candidates: %q", got)
	}
	if got := NamedFiles(`if then (`, "/p", ""); got != nil {
		t.Fatalf("a command that does not parse names nothing: %q", got)
	}
}
