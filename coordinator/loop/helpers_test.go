package loop

import (
	"context"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// allowAll approves every command, as --yes does.
type allowAll struct{}

func (allowAll) ApproveCommand(context.Context, string) tools.Decision {
	return tools.Decision{Allowed: true}
}

func mustTools(t *testing.T) *tools.Toolset {
	tools, err := tools.NewToolset(tools.Options{Approver: allowAll{}, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tools.Close)
	return tools
}

func readFile(t *testing.T, fs afero.Fs, path string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
