//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

// sparseFile makes a file of size bytes that takes no disk: the file
// tools must judge it by its size, not by what it holds.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	writeTestFile(t, path, "a\n")
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func TestFileToolsRefuseAFileAboveTheBoundBeforeReadingIt(t *testing.T) {
	t.Parallel()
	ts, root := patchToolset(t, allowAll)
	big := filepath.Join(root, "big.txt")
	sparseFile(t, big, 1<<30)
	const want = "it is 1.0 GB, more than the 16.0 MB the file tools edit; use run_command"
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "big.txt", "old_string": "a", "new_string": "b"}), "cannot edit big.txt: "+want)
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "big.txt", "edits": []map[string]any{
		{"old_string": "a", "new_string": "b"}, {"old_string": "b", "new_string": "c"}}}), "cannot edit big.txt: "+want)
	mustErr(t, call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Update File: big.txt\n@@\n-a\n+b\n*** End Patch"}),
		"cannot update big.txt: "+want)
	mustErr(t, call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Update File: big.txt\n*** Move to: moved.txt\n@@\n-a\n+b\n*** End Patch"}),
		"cannot update big.txt: "+want)
	// Just above the bound is refused, at it is edited.
	edge := filepath.Join(root, "edge.txt")
	sparseFile(t, edge, workers.MaxEditFile+1)
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "edge.txt", "old_string": "a", "new_string": "b"}), "cannot edit edge.txt: it is 16.0 MB")
	if fi, err := os.Stat(big); err != nil || fi.Size() != 1<<30 {
		t.Fatalf("big.txt after the refusals: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(root, "moved.txt")); !os.IsNotExist(err) {
		t.Fatalf("moved.txt was made: %v", err)
	}
	assertNoTempFiles(t, root)
}

func TestAmplifyingEditsAreRefusedBeforeTheyAreMade(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	path := filepath.Join(ts.Root(), "a.txt")
	before := strings.Repeat("a", 2000)
	writeTestFile(t, path, before)
	ten := strings.Repeat("a", 10)
	edits := []map[string]any{}
	for range 7 {
		edits = append(edits, map[string]any{"old_string": "a", "new_string": ten, "replace_all": true})
	}
	// 2 KB × 10⁴ is 20 MB at the fourth edit: refused there, before the
	// later ones (20 GB) are tried.
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "edits": edits}),
		"edit 4 of 7: cannot edit a.txt: the new content would be 19.1 MB, more than the 16.0 MB the file tools write; nothing was written; none of the edits was made")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": strings.Repeat("b", 9000), "replace_all": true}),
		"cannot edit a.txt: the new content would be 17.2 MB")
	if got := readTestFile(t, path); got != before {
		t.Fatalf("a refused edit changed the file to %d bytes", len(got))
	}
	assertNoTempFiles(t, ts.Root())
}

func TestContentAboveTheBoundIsNeverWritten(t *testing.T) {
	t.Parallel()
	ts, root := patchToolset(t, allowAll)
	huge := strings.Repeat("x", workers.MaxEditFile+1)
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "w.txt", "content": huge}),
		"cannot write w.txt: the new content would be 16.0 MB, more than the 16.0 MB the file tools write; nothing was written")
	mustErr(t, call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Add File: first.txt\n+1\n*** Add File: p.txt\n+" + huge + "\n*** End Patch"}),
		"cannot add p.txt: the new content would be 16.0 MB")
	for _, name := range []string{"w.txt", "first.txt", "p.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused write: %v", name, err)
		}
	}
	// At the bound it is written.
	mustOK(t, call(t, ts, "write_file", map[string]any{"path": "w.txt", "content": huge[1:]}))
	assertNoTempFiles(t, root)
}
