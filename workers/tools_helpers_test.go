package workers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The file tools are the simplest way to drive the resolution beneath the
// root that workers gives them, and what the tests below promise is what
// the model sees of it.

// newTestToolset returns a Toolset rooted in a fresh temporary directory.
func newTestToolset(t testing.TB, opts tools.Options) *tools.Toolset {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	ts, err := tools.NewToolset(opts)
	if err != nil {
		t.Fatalf("NewToolset: %v", err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// call runs a tool with arguments given as a Go value.
func call(t testing.TB, ts *tools.Toolset, name string, args any) workers.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return ts.Call(context.Background(), name, raw)
}

// mustOK fails the test unless res is a success.
func mustOK(t testing.TB, res workers.Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
	return res.Output
}

// mustErr fails the test unless res is an error containing want.
func mustErr(t testing.TB, res workers.Result, want string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result containing %q, got success: %s", want, res.Output)
	}
	if !strings.Contains(res.Output, want) {
		t.Fatalf("error %q does not contain %q", res.Output, want)
	}
}

// writeTestFile writes content to path, making its directories.
func writeTestFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readTestFile returns the content of path.
func readTestFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertNoTempFiles fails if a write left its temporary file under root.
func assertNoTempFiles(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".ralph-write-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
