package slash

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/lsp"
)

// TestLSPTextShowsEachState: /lsp shows each server's state in one line,
// what a server said without terminal controls.
func TestLSPTextShowsEachState(t *testing.T) {
	t.Parallel()
	got := LSPText([]lsp.State{
		{Server: "gopls", Root: ".", Status: "running", Pid: 42, Open: 1, Errors: 2, Warnings: 1},
		{Server: "pyright", Status: "not started"},
		{Server: "clangd", Root: "c", Status: "stopped", Why: "it exited with status 1 (it said: \x1b[31mboom)"},
	})
	want := "gopls (.): running, pid 42, 1 file open, 2 errors, 1 warning\n" +
		"pyright: not started (it starts on the first edit of a file it handles)\n" +
		"clangd (c): stopped: it exited with status 1 (it said: boom)\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(LSPText(nil), "no language servers") {
		t.Fatalf("no servers: %q", LSPText(nil))
	}
}
