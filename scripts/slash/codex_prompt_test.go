package slash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A codex prompt is sent as codex sends it, whether called /prompts:NAME
// or /NAME: $1 filled, $$ kept as two dollars, its !`…` line text that
// nothing runs, and its allowed-tools and model left out with a note.
func TestCodexPromptIsTextAsCodexSendsIt(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	h, out, _ := host(t)
	h.Command = nil // a shell line would be refused, and Dispatch fail
	dir := filepath.Join(home, ".codex", "prompts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\ndescription: Price it\nargument-hint: ITEM\nallowed-tools: Bash(ls:*)\nmodel: haiku\n---\nPrice $1 in $$ and run !`ls` then $2.\n"
	if err := os.WriteFile(filepath.Join(dir, "price.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"/prompts:price widget", "/price widget"} {
		o, err := Dispatch(context.Background(), h, line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if o.Send != "Price widget in $$ and run !`ls` then ." {
			t.Errorf("%s sent %q", line, o.Send)
		}
		if o.Prepare != nil || o.Tools != nil || o.Model != "" || o.Scope != nil {
			t.Errorf("%s: codex reads no allowed-tools, model or shell line: %+v", line, o)
		}
	}
	if !strings.Contains(out.String(), "allowed-tools, model are left out") {
		t.Errorf("no note on the fields codex does not read: %q", out)
	}
}
