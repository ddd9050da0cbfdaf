package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestApplyPatchAsFastAsWriteFile is issue 70's must-show: a patch that
// adds 50 files and changes a 2,000-line file in 20 places is applied
// within 1.5 times the time write_file takes to write the same files,
// paired run by run (the same machine load for both) and compared by
// the median of the rounds.
func TestApplyPatchAsFastAsWriteFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("timing")
	}
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
	p.WriteString("*** Begin Patch\n")
	for i := range 50 {
		fmt.Fprintf(&p, "*** Add File: pkg%d/file%d.go\n", i%5, i)
		for j := range 20 {
			fmt.Fprintf(&p, "+// line %d of file %d\n", j, i)
		}
	}
	p.WriteString("*** Update File: big.txt\n")
	for i := 50; i < 2000; i += 100 {
		fmt.Fprintf(&p, "@@\n line %d of the big file\n-line %d of the big file\n+line %d of the big file, changed\n line %d of the big file\n", i-1, i, i, i+1)
	}
	p.WriteString("*** End Patch\n")
	patchText := p.String()

	var patchTimes, writeTimes []time.Duration
	for round := range 5 {
		run := func(patch bool) time.Duration {
			ts, root := patchToolset(t, allowAll)
			writeTestFile(t, filepath.Join(root, "big.txt"), big.String())
			start := time.Now()
			if patch {
				mustOK(t, call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: patchText}))
			} else {
				for i := range 50 {
					var c strings.Builder
					for j := range 20 {
						fmt.Fprintf(&c, "// line %d of file %d\n", j, i)
					}
					mustOK(t, call(t, ts, ToolWriteFile, WriteFileParams{Path: fmt.Sprintf("pkg%d/file%d.go", i%5, i), Content: c.String()}))
				}
				mustOK(t, call(t, ts, ToolWriteFile, WriteFileParams{Path: "big.txt", Content: bigAfter.String()}))
			}
			d := time.Since(start)
			if got := readTestFile(t, filepath.Join(root, "big.txt")); got != bigAfter.String() {
				t.Fatalf("big.txt differs after the %v run", map[bool]string{true: "apply_patch", false: "write_file"}[patch])
			}
			return d
		}
		// Alternate which goes first, so neither always meets a warm cache.
		if round%2 == 0 {
			patchTimes = append(patchTimes, run(true))
			writeTimes = append(writeTimes, run(false))
		} else {
			writeTimes = append(writeTimes, run(false))
			patchTimes = append(patchTimes, run(true))
		}
	}
	slices.Sort(patchTimes)
	slices.Sort(writeTimes)
	mp, mw := patchTimes[len(patchTimes)/2], writeTimes[len(writeTimes)/2]
	t.Logf("median apply_patch %v, write_file %v (%.2f×)", mp, mw, float64(mp)/float64(mw))
	if float64(mp) > 1.5*float64(mw) {
		t.Errorf("apply_patch took %v, more than 1.5 × write_file's %v", mp, mw)
	}
}
