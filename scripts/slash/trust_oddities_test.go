package slash

import (
	"strings"
	"testing"
)

// TestShownShellKeepsABlocksLines: a refused ```! block of several lines
// is named with its line breaks kept (as \n), not run together into what
// reads as one command; a single line is !`…` as before.
func TestShownShellKeepsABlocksLines(t *testing.T) {
	if got := shownShell("git status"); got != "!`git status`" {
		t.Errorf("one line: %q", got)
	}
	got := shownShell("\necho a\nrm -rf build\n")
	if got != "the ```! block `echo a\\nrm -rf build`" || strings.Contains(got, "\n") {
		t.Errorf("block: %q", got)
	}
}

// TestPromptErrorNamesPromptOnce: a codex prompt's argument error names
// /prompts:NAME, not /prompts:prompts:NAME.
func TestPromptErrorNamesPromptOnce(t *testing.T) {
	h := &Host{}
	_, _, err := h.expandBody(customCmd{prompts: true}, "prompts:pp", "Scan $FILES at $DEPTH", "FILES=a")
	if err == nil || !strings.Contains(err.Error(), "/prompts:pp:") || strings.Contains(err.Error(), "prompts:prompts") {
		t.Errorf("error = %v", err)
	}
}
