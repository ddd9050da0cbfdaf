package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

func BenchmarkRunCommandTrue(b *testing.B) {
	ts := newTestToolset(b, Options{Approver: allowAll})
	args := json.RawMessage(`{"command": "true"}`)
	ctx := context.Background()
	for b.Loop() {
		if res := ts.Call(ctx, "run_command", args); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	ts := newTestToolset(b, Options{})
	writeTestFile(b, filepath.Join(ts.Root(), "src", "file.go"), numberedLines(500))
	args := json.RawMessage(`{"path": "src/file.go"}`)
	ctx := context.Background()
	for b.Loop() {
		if res := ts.Call(ctx, "read_file", args); res.IsError {
			b.Fatal(res.Output)
		}
	}
}
