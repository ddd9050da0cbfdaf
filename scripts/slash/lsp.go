package slash

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/workers/lsp"
)

// runLSP is /lsp: each language server the session may start, whether
// it runs (pid, root, open files, the diagnostics it last published) or
// why it stopped. The state is the session's own (Toolset.LSP), in this
// process, as /mcp's is.
func runLSP(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.LSP == nil {
		return Outcome{}, fmt.Errorf("/lsp: language servers are %w here; `ralph doctor` lists them", ErrNotAvailable)
	}
	h.printf("%s", LSPText(h.LSP()))
	return Outcome{}, nil
}

// LSPText lists language servers for a person, one line each; what a
// server said is stripped of terminal controls.
func LSPText(st []lsp.State) string {
	if len(st) == 0 {
		return "no language servers: none is configured or found on your PATH, or lsp_enabled = false; see docs/editors.md\n"
	}
	var b strings.Builder
	for _, s := range st {
		b.WriteString(clean(s.String()))
		b.WriteString("\n")
	}
	return b.String()
}
