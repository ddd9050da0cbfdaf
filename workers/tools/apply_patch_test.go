package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// writeAsker is an approver that records each write question and
// answers allow.
type writeAsker struct {
	mu    sync.Mutex
	asked [][]string
}

func (*writeAsker) ApproveCommand(context.Context, string) Decision { return Decision{Allowed: true} }

func (w *writeAsker) ApproveWrite(_ context.Context, tool string, paths ...string) Decision {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked = append(w.asked, append([]string{tool}, paths...))
	return Decision{Allowed: true}
}

func patchToolset(t *testing.T, approver Approver) (*Toolset, string) {
	root := t.TempDir()
	return newTestToolset(t, Options{Approver: approver, Options: workers.Options{Root: root, Sandbox: sandbox.FullAccess}}), root
}

func TestApplyPatchAsksOnceNamingEveryFile(t *testing.T) {
	t.Parallel()
	w := &writeAsker{}
	ts, root := patchToolset(t, w)
	writeTestFile(t, filepath.Join(root, "b.txt"), "b\n")
	res := call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n*** Move to: c/b.txt\n@@\n-b\n+B\n*** End Patch"})
	mustOK(t, res)
	if len(w.asked) != 1 || strings.Join(w.asked[0], " ") != "apply_patch a.txt b.txt c/b.txt" {
		t.Fatalf("questions = %v, want one naming a.txt, b.txt and c/b.txt", w.asked)
	}
	if got := readTestFile(t, filepath.Join(root, "c", "b.txt")); got != "B\n" {
		t.Errorf("c/b.txt = %q", got)
	}
	if len(res.Changes) != 3 {
		t.Errorf("Changes = %+v, want a.txt, b.txt (moved away) and c/b.txt", res.Changes)
	}
}

func TestApplyPatchFailureKeepsAndNamesTheEarlierHunks(t *testing.T) {
	t.Parallel()
	ts, root := patchToolset(t, allowAll)
	res := call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Delete File: gone.txt\n*** End Patch"})
	if !res.IsError || !strings.Contains(res.Output, "gone.txt") || !strings.Contains(res.Output, "A a.txt") {
		t.Fatalf("result = %+v, want the failure of gone.txt and a.txt named as applied", res)
	}
	if got := readTestFile(t, filepath.Join(root, "a.txt")); got != "a\n" {
		t.Errorf("a.txt = %q, want the earlier hunk kept", got)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "a.txt" {
		t.Errorf("Changes = %+v, want a.txt", res.Changes)
	}
}

func TestApplyPatchRefusesProtectedAndLinks(t *testing.T) {
	t.Parallel()
	ts, root := patchToolset(t, allowAll)
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(root, "real.txt"), "real\n")
	if err := os.Symlink("real.txt", filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ patch, want string }{
		{"*** Add File: ok.txt\n+x\n*** Add File: .git/hooks/pre-commit\n+evil", "protected"},
		{"*** Add File: ok.txt\n+x\n*** Update File: real.txt\n*** Move to: .GIT/config\n@@\n-real\n+x", "protected"},
		{"*** Add File: ok.txt\n+x\n*** Add File: /etc/passwd\n+x", "outside the project"},
	} {
		res := call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n" + tc.patch + "\n*** End Patch"})
		if !res.IsError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("%q: result %q, want a refusal saying %q", tc.patch, res.Output, tc.want)
		}
		if _, err := os.Stat(filepath.Join(root, "ok.txt")); !os.IsNotExist(err) {
			t.Fatalf("%q: the refused patch wrote ok.txt", tc.patch)
		}
	}
	res := call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch"})
	if !res.IsError || !strings.Contains(res.Output, "symbolic link") {
		t.Errorf("deleting a link: %q", res.Output)
	}
	if got := readTestFile(t, filepath.Join(root, "real.txt")); got != "real\n" {
		t.Errorf("real.txt = %q after a refused delete of the link to it", got)
	}
}

// TestApplyPatchOnlyForTheFamiliesTrainedOnIt: every toolset has
// apply_patch, so that a model of any family that calls it gets it, but
// only the families trained on codex's patch format are offered it.
func TestApplyPatchOnlyForTheFamiliesTrainedOnIt(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess}})
	for model, want := range map[string]bool{"gpt-4o-mini": false, "claude-sonnet-4-5": false, "gpt-5-codex": true, "gpt-oss-20b": true,
		"gpt-5": false /* through its shell */} {
		defs, _ := ts.Offer(model, ts.Definitions(), nil)
		offered := false
		for _, d := range defs {
			offered = offered || d.Name == ToolApplyPatch
		}
		if offered != want {
			t.Errorf("%s offered apply_patch: %v, want %v", model, offered, want)
		}
	}
	if got := FileTools(newTestToolsetPatch(t).Definitions()); !strings.Contains(got, "apply_patch") {
		t.Errorf("FileTools = %q, want apply_patch named", got)
	}
}

func newTestToolsetPatch(t *testing.T) *Toolset {
	ts, _ := patchToolset(t, allowAll)
	return ts
}
