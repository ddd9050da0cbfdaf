package loop

import (
	"context"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/workers"
)

// allowAll approves every command, as --yes does.
type allowAll struct{}

func (allowAll) ApproveCommand(context.Context, string) workers.Decision {
	return workers.Decision{Allowed: true}
}

func mustTools(t *testing.T) *workers.Toolset {
	tools, err := workers.NewToolset(workers.Options{Root: t.TempDir(), Approver: allowAll{}})
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
