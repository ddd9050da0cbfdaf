package mcp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fromWire decodes a result as the SDK does from a server's answer.
func fromWire(t *testing.T, js string) *sdk.CallToolResult {
	t.Helper()
	var r sdk.CallToolResult
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestResultRepeatsLeftOut: server-filesystem's answers, as it writes
// them (issue 36 item 9), reach the model once: its text without the
// same text again as structured content, its image as the note alone
// (not ~31 KB of base64 after it), and a long file as the file, so that
// the cut keeps the file's own end rather than an escaped copy of it.
func TestResultRepeatsLeftOut(t *testing.T) {
	long := strings.Repeat("line of a long file\n", 2200)
	text, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": long}}, "structuredContent": map[string]any{"content": long}})
	if r := resultText(fromWire(t, string(text))); r.Output != long {
		t.Fatalf("a file of %d bytes reached the model as %d bytes, ending %q", len(long), len(r.Output), r.Output[len(r.Output)-60:])
	}
	img := base64.StdEncoding.EncodeToString(make([]byte, 300<<10))
	media := `{"content":[{"type":"image","data":"` + img + `","mimeType":"image/png"}],"structuredContent":{"content":[{"type":"image","data":"` + img + `","mimeType":"image/png"}]}}`
	if r := resultText(fromWire(t, media)); r.Output != "[image: image/png, 300.0 KB — not shown: ralph passes only text to the model]" {
		t.Fatalf("the image reached the model as %d bytes: %.200q", len(r.Output), r.Output)
	}
	// What the parts do not hold is still shown, the repeats replaced.
	mixed := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"}],"structuredContent":{"content":"` + strings.Repeat("x", 300) + `","lines":12}}`
	if r := resultText(fromWire(t, mixed)); !strings.HasSuffix(r.Output, "\nstructured content:\n{\"content\":\"[the same as the text above]\",\"lines\":12}") {
		t.Fatalf("mixed: %q", r.Output)
	}
	// A flag alone is not taken as held by an unrelated text.
	if r := resultText(fromWire(t, `{"content":[{"type":"text","text":"done"}],"structuredContent":{"ok":false}}`)); r.Output != "done\nstructured content:\n{\"ok\":false}" {
		t.Fatalf("flag: %q", r.Output)
	}
}
