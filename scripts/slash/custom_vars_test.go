package slash

import (
	"errors"
	"strings"
	"testing"
)

func TestShellLinesTakeBlocks(t *testing.T) {
	body := "a !`git status` b\n```!\necho one\necho two\n```\nc"
	got := shellLines(body)
	if len(got) != 2 || got[0] != "git status" || got[1] != "echo one\necho two" {
		t.Fatalf("shellLines = %q", got)
	}
}

func TestExpandPathsQuotesInShell(t *testing.T) {
	root := "/p/it's kit"
	body := "In ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PROJECT_DIR.\n!`${CLAUDE_PLUGIN_ROOT}/s.sh`\n```!\n\"${CLAUDE_PLUGIN_ROOT}/s.sh\" '${CLAUDE_PLUGIN_ROOT}'\n```\n"
	got := expandPaths(body, root, "/proj")
	for _, want := range []string{
		"In /p/it's kit and /proj.",
		"!`'/p/it'\\''s kit'/s.sh`",
		"\"/p/it's kit/s.sh\" '/p/it'\\''s kit'",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expandPaths lacks %q:\n%s", want, got)
		}
	}
	if got := expandPaths("${CLAUDE_PLUGIN_ROOT}", "", "/proj"); got != "${CLAUDE_PLUGIN_ROOT}" {
		t.Errorf("no plugin: %q", got)
	}
	if got := expandRulePaths("Bash(${CLAUDE_PLUGIN_ROOT}/s.sh:*)", "/p/kit", ""); got != "Bash(/p/kit/s.sh:*)" {
		t.Errorf("rule: %q", got)
	}
	if got := doubleQuoted("a\"$`\\"); got != "a\\\"\\$\\`\\\\" {
		t.Errorf("doubleQuoted: %q", got)
	}
}

func TestExpandPromptAsCodex(t *testing.T) {
	// codex's expand_numeric_placeholders keeps $$ as two dollars, and a
	// digit after them is no placeholder.
	got, used, err := expandPrompt("fix", "Fix #$1 ($2), budget $$5, all: $ARGUMENTS, $3.", "12 high")
	if err != nil || !used || got != "Fix #12 (high), budget $$5, all: 12 high, ." {
		t.Errorf("positional: %q %v %v", got, used, err)
	}
	if got, _, _ = expandPrompt("n", "$10 and $x", "a"); got != "a0 and $x" {
		t.Errorf("two digits, lower case: %q", got)
	}
	got, _, err = expandPrompt("scan", "Scan $FILES at $DEPTH, not $$FILES, $1 $ARGUMENTS", `FILES="a b" DEPTH=2`)
	if err != nil || got != "Scan a b at 2, not $$FILES, $1 $ARGUMENTS" {
		t.Errorf("named: %q %v", got, err)
	}
	if got, used, _ = expandPrompt("plain", "Cost: $$ and !`ls`", "x"); used || got != "Cost: $$ and !`ls`" {
		t.Errorf("no placeholder: %q %v", got, used)
	}
	if _, _, err = expandPrompt("scan", "Scan $FILES at $DEPTH", "FILES=a"); !errors.Is(err, ErrPromptArgs) || !strings.Contains(err.Error(), "DEPTH") {
		t.Errorf("missing key: %v", err)
	}
	if _, _, err = expandPrompt("scan", "Scan $FILES", "a"); !errors.Is(err, ErrPromptArgs) {
		t.Errorf("not KEY=value: %v", err)
	}
}
