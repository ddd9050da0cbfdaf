package project

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/ralph-dev/ralph/workers/tools/applypatch"
)

// patchBench is issue 70's paired comparison: one patch that adds 49 files
// and changes a 2,000-line file in 20 places, against the same 50 files'
// contents written by 50 write_file calls.
type patchBench struct {
	big, bigAfter string
	patch         string
	writes        []tools.WriteFileParams
}

func newPatchBench() patchBench {
	var big, bigAfter strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "line %d of the big file\n", i)
		if i%100 == 50 {
			fmt.Fprintf(&bigAfter, "line %d of the big file, changed\n", i)
		} else {
			fmt.Fprintf(&bigAfter, "line %d of the big file\n", i)
		}
	}
	var p strings.Builder
	var writes []tools.WriteFileParams
	p.WriteString("*** Begin Patch\n")
	for i := range 49 {
		path := fmt.Sprintf("pkg%d/file%d.go", i%5, i)
		fmt.Fprintf(&p, "*** Add File: %s\n", path)
		var c strings.Builder
		for j := range 20 {
			fmt.Fprintf(&p, "+// line %d of file %d\n", j, i)
			fmt.Fprintf(&c, "// line %d of file %d\n", j, i)
		}
		writes = append(writes, tools.WriteFileParams{Path: path, Content: c.String()})
	}
	p.WriteString("*** Update File: big.txt\n")
	for i := 50; i < 2000; i += 100 {
		fmt.Fprintf(&p, "@@\n line %d of the big file\n-line %d of the big file\n+line %d of the big file, changed\n line %d of the big file\n", i-1, i, i, i+1)
	}
	p.WriteString("*** End Patch\n")
	writes = append(writes, tools.WriteFileParams{Path: "big.txt", Content: bigAfter.String()})
	return patchBench{big: big.String(), bigAfter: bigAfter.String(), patch: p.String(), writes: writes}
}

// session opens a one-shot session on a fresh git repository holding the
// big file, committed, with its baseline checkpoint taken, as a session
// stands when the model's first tool call arrives.
func (pb patchBench) session(b *testing.B) (*Project, *checkpoint.Checkpoints) {
	b.Helper()
	dir := b.TempDir()
	write(b, filepath.Join(dir, "big.txt"), pb.big)
	for i := range 100 {
		write(b, filepath.Join(dir, "src", fmt.Sprintf("f%d.go", i)), fmt.Sprintf("package src // %d\n", i))
	}
	git := exec.Command("bash", "-c", "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm files")
	git.Dir = dir
	if out, err := git.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	getenv := env(b)
	p, err := Open(context.Background(), Options{Dir: dir, Mode: ModeOneShot, Yes: true,
		Getenv: func(k string) string {
			if k == "RALPH_MODEL" {
				return "gpt-5" // a model that is offered apply_patch
			}
			return getenv(k)
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	cps := p.Checkpoints(context.Background())
	if cps == nil {
		b.Fatal("no checkpoints in a git repository")
	}
	p.Session.Place()
	cps.Ready()
	return p, cps
}

// turn runs one model turn's tool calls as the coordinator runs them:
// Before, the calls through the tool door one after another, the
// checkpoint of the paths they name, and waits for it, which the next
// model request would.
func turn(b *testing.B, p *Project, cps *checkpoint.Checkpoints, calls map[string][]any, written []string) {
	b.Helper()
	ctx := context.Background()
	cps.Before(ctx)
	for name, list := range calls {
		for _, a := range list {
			raw, err := json.Marshal(a)
			if err != nil {
				b.Fatal(err)
			}
			if r := p.Tools.Call(ctx, name, raw); r.IsError {
				b.Fatalf("%s: %s", name, r.Output)
			}
		}
	}
	var changed []git.FileChange
	cps.After(coordinator.Step{Request: 1, Turn: 1}, written, func(fs []git.FileChange) { changed = fs })
	cps.Wait()
	if len(changed) != 50 {
		b.Fatalf("the checkpoint saw %d changed files, not 50", len(changed))
	}
}

// BenchmarkApplyPatch50 times issue 70's must-show in a session: one
// apply_patch call of 49 new files and 20 changes to a 2,000-line file,
// against 50 write_file calls of the same contents, each as one model
// turn through the tool door with its checkpoint (target: apply_patch
// within 1.5x). The two run side by side in each pair, which goes first
// alternating, each in a fresh session; the ratio is the median of the
// pairs' ratios, which a shared machine's drifting load moves least.
func BenchmarkApplyPatch50(b *testing.B) {
	pb := newPatchBench()
	var patchPaths []string
	for _, w := range pb.writes {
		patchPaths = append(patchPaths, w.Path)
	}
	if got := applypatch.Paths(pb.patch); len(got) != len(patchPaths) {
		b.Fatalf("the patch names %d files, not %d", len(got), len(patchPaths))
	}
	writes := make([]any, len(pb.writes))
	for i, w := range pb.writes {
		writes[i] = w
	}
	n := max(b.N, 9)
	took := map[bool][]time.Duration{}
	var ratios []float64
	for i := range n {
		var pair [2]time.Duration
		for _, patch := range []bool{i%2 == 0, i%2 == 1} {
			p, cps := pb.session(b)
			start := time.Now()
			if patch {
				turn(b, p, cps, map[string][]any{tools.ToolApplyPatch: {tools.ApplyPatchParams{Input: pb.patch}}}, applypatch.Paths(pb.patch))
			} else {
				turn(b, p, cps, map[string][]any{tools.ToolWriteFile: writes}, patchPaths)
			}
			d := time.Since(start)
			if got := read(b, filepath.Join(p.Root, "big.txt")); got != pb.bigAfter {
				b.Fatalf("big.txt is not as written after the apply_patch=%v run", patch)
			}
			took[patch] = append(took[patch], d)
			pair[map[bool]int{true: 0, false: 1}[patch]] = d
		}
		ratios = append(ratios, float64(pair[0])/float64(pair[1]))
	}
	median := func(ds []time.Duration) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	slices.Sort(ratios)
	b.ReportMetric(median(took[true]), "patch-median-ms")
	b.ReportMetric(median(took[false]), "write-median-ms")
	b.ReportMetric(ratios[len(ratios)/2], "patch/write")
}
