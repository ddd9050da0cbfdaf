package workers

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"
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

// BenchmarkRunCommandHardStop measures a hard stop of a command outside
// the sandbox: from the cancel to run_command's return, with no process of
// the group alive. The target is a p99 under 100 ms.
func BenchmarkRunCommandHardStop(b *testing.B) {
	benchHardStop(b, newTestToolset(b, Options{Approver: allowAll}))
}

// benchHardStop reports the median and 99th percentile of hardStop on ts,
// the figures a shared machine's outliers leave readable.
func benchHardStop(b *testing.B, ts *Toolset) {
	var ds []time.Duration
	for b.Loop() {
		d, _ := hardStop(b, ts)
		ds = append(ds, d)
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)])/float64(time.Millisecond), "p99-ms")
}
