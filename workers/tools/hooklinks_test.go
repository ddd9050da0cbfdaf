//go:build unix

package tools

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Issue 88, gap A: a PreToolUse hook guarding a file by its name (Claude
// Code's hook authors compare file_path with the names they protect) was
// given the link the model named (…/proj/sl) while the call changed the
// file it leads to (secret.txt). Every tool's hooks now see the file the
// call really reads or changes: its path resolved through the
// workspace's door.

// linkGuard logs each hook input it is given and refuses one whose
// file_path or path is secret.txt or lies under private/.
const linkGuard = `in=$(cat); printf '%s\n' "$in" >> "$HOME/seen.jsonl"
case "$in" in
*'secret.txt"'*|*'/private/'*|*'/private"'*) echo "that file is guarded" >&2; exit 2;;
esac
exit 0
`

// linkLayout makes, under root, secret.txt and private/notes.txt, the
// links sl -> secret.txt and pl -> private a command could have made,
// and plain.txt.
func linkLayout(t *testing.T, root string) {
	t.Helper()
	writeTestFile(t, filepath.Join(root, "secret.txt"), "keep me\n")
	writeTestFile(t, filepath.Join(root, "private", "notes.txt"), "keep me\n")
	writeTestFile(t, filepath.Join(root, "plain.txt"), "plain\n")
	for link, to := range map[string]string{"sl": "secret.txt", "pl": "private"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// linkRoutes are the calls of every tool of the list that names a file
// (Paths, or writing files from ralph's own process), each through a
// link: the hook must be given the file the link leads to. want is that
// file, relative to the root.
var linkRoutes = []struct {
	name, tool string
	args       map[string]any
	want       string
}{
	{"read_file through a link", ToolReadFile, map[string]any{"path": "sl"}, "secret.txt"},
	{"write_file through a link", ToolWriteFile, map[string]any{"path": "sl", "content": "PWNED\n"}, "secret.txt"},
	{"write_file through a linked directory", ToolWriteFile, map[string]any{"path": "pl/notes.txt", "content": "PWNED\n"}, "private/notes.txt"},
	{"edit_file through a link", ToolEditFile, map[string]any{"path": "sl", "old_string": "keep me", "new_string": "PWNED"}, "secret.txt"},
	{"edit_file's edits through a link", ToolEditFile, map[string]any{"path": "sl", "edits": []map[string]any{{"old_string": "keep me", "new_string": "PWNED"}}}, "secret.txt"},
	{"apply_patch updating a link", ToolApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: sl\n@@\n-keep me\n+PWNED\n*** End Patch\n"}, "secret.txt"},
	{"apply_patch adding through a linked directory", ToolApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: pl/new.txt\n+PWNED\n*** End Patch\n"}, "private/new.txt"},
	{"apply_patch moving onto a link", ToolApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: plain.txt\n*** Move to: sl\n@@\n-plain\n+PWNED\n*** End Patch\n"}, "secret.txt"},
	{"list_files of a linked directory", ToolListFiles, map[string]any{"path": "pl"}, "private"},
	{"search in a linked directory", ToolSearch, map[string]any{"pattern": "keep", "path": "pl"}, "private"},
}

// TestHooksSeeTheFileALinkLeadsTo: every route above is refused by the
// guard, which was given the file the link leads to, and nothing guarded
// changes.
func TestHooksSeeTheFileALinkLeadsTo(t *testing.T) {
	for _, r := range linkRoutes {
		t.Run(r.name, func(t *testing.T) {
			ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir(), Sandbox: sandbox.FullAccess}})
			root := ts.Root()
			linkLayout(t, root)
			set, bin := hookSet(t, root, `{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"command","command":"{bin}/guard.sh"}]}]}}`,
				map[string]string{"guard.sh": linkGuard})
			var warned []string
			res := callCtx(hookCtx(set, &warned), t, ts, r.tool, r.args)
			if !res.IsError || !strings.Contains(res.Output, "that file is guarded") {
				t.Errorf("the call was not refused by the guard: %+v", res)
			}
			for _, f := range []string{"secret.txt", "private/notes.txt"} {
				if got := readTestFile(t, filepath.Join(root, f)); got != "keep me\n" {
					t.Errorf("%s = %q", f, got)
				}
			}
			if _, err := os.Lstat(filepath.Join(root, "private", "new.txt")); err == nil {
				t.Errorf("private/new.txt was made")
			}
			want := filepath.Join(root, filepath.FromSlash(r.want))
			if seen := hookPaths(t, filepath.Join(bin, "seen.jsonl")); !slices.Contains(seen, want) {
				t.Errorf("the hook was given %q, not %s", seen, want)
			}
		})
	}
}

// TestEveryToolThatNamesAFileHasALinkRoute: a tool added to the list
// that names a file (Paths) or writes files from ralph's process must get
// a row in linkRoutes, so that its hooks are shown to see through links.
func TestEveryToolThatNamesAFileHasALinkRoute(t *testing.T) {
	for _, name := range withoutLinkRoute(tools) {
		t.Errorf("%s names or writes files but has no row in linkRoutes: add one that reaches a guarded file through a link", name)
	}
	// The guard sees a planted tool that writes files with no row.
	planted := append(slices.Clone(tools), toolSpec{name: "planted_write", info: ToolInfo{WritesInProcess: true}},
		toolSpec{name: "planted_record", info: ToolInfo{WritesInProcess: true, Records: true}})
	if got := withoutLinkRoute(planted); !slices.Equal(got, []string{"planted_write"}) {
		t.Errorf("the guard found %q, want the planted tool that writes files", got)
	}
}

// withoutLinkRoute are the tools of list that name a file (Paths) or
// write files from ralph's process (not only its records) and have no
// row in linkRoutes.
func withoutLinkRoute(list []toolSpec) []string {
	covered := map[string]bool{}
	for _, r := range linkRoutes {
		covered[r.tool] = true
	}
	var out []string
	for _, s := range list {
		if (s.info.Paths || s.info.WritesInProcess && !s.info.Records) && !covered[s.name] {
			out = append(out, s.name)
		}
	}
	return out
}

// TestALinkSwappedAfterTheHooksJudgedIsRefused: the hook is shown sl
// leading to plain.txt and allows it, and then (as a background command
// could) points sl at secret.txt; the tool opens secret.txt, which the
// hook never judged, and changes nothing.
func TestALinkSwappedAfterTheHooksJudgedIsRefused(t *testing.T) {
	for _, r := range []struct {
		tool string
		args map[string]any
	}{
		{ToolWriteFile, map[string]any{"path": "sl", "content": "PWNED\n"}},
		{ToolEditFile, map[string]any{"path": "sl", "old_string": "keep me", "new_string": "PWNED"}},
		{ToolApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: sl\n@@\n-keep me\n+PWNED\n*** End Patch\n"}},
	} {
		t.Run(r.tool, func(t *testing.T) {
			ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir(), Sandbox: sandbox.FullAccess}})
			root := ts.Root()
			writeTestFile(t, filepath.Join(root, "secret.txt"), "keep me\n")
			writeTestFile(t, filepath.Join(root, "plain.txt"), "keep me\n")
			if err := os.Symlink("plain.txt", filepath.Join(root, "sl")); err != nil {
				t.Fatal(err)
			}
			set, bin := hookSet(t, root, `{"hooks":{"PreToolUse":[{"matcher":"Edit|Write|MultiEdit","hooks":[{"type":"command","command":"{bin}/swap.sh"}]}]}}`,
				map[string]string{"swap.sh": linkGuard[:strings.Index(linkGuard, "\n")+1] + `ln -sfn secret.txt "$CLAUDE_PROJECT_DIR/sl"` + "\n"})
			var warned []string
			res := callCtx(hookCtx(set, &warned), t, ts, r.tool, r.args)
			if !res.IsError || !strings.Contains(res.Output, "not the file the PreToolUse hooks judged") {
				t.Errorf("the swapped link was followed: %+v", res)
			}
			if got := readTestFile(t, filepath.Join(root, "secret.txt")); got != "keep me\n" {
				t.Errorf("secret.txt = %q", got)
			}
			if seen := hookPaths(t, filepath.Join(bin, "seen.jsonl")); !slices.Contains(seen, filepath.Join(root, "plain.txt")) {
				t.Errorf("the hook was given %q, not plain.txt", seen)
			}
		})
	}
}

// hookPaths are the file_path and path values of the hook inputs logged
// in log.
func hookPaths(t *testing.T, log string) []string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("the hook logged nothing: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var in struct {
			ToolInput map[string]any `json:"tool_input"`
		}
		if json.Unmarshal(sc.Bytes(), &in) != nil {
			continue
		}
		for _, k := range hookPathKeys {
			if p, ok := in.ToolInput[k].(string); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestAHookedWriteInAnAddedDirectory: a write into a directory added with
// --add-dir, named through a link to it, is given to the hooks as the
// file it changes and, the hooks allowing it, done: the file the tool
// opens (in the added directory's own door) is the one they judged.
func TestAHookedWriteInAnAddedDirectory(t *testing.T) {
	real := t.TempDir()
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(real, via); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir(), AddDirs: []string{via}, Sandbox: sandbox.FullAccess}})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"command","command":"{bin}/guard.sh"}]}]}}`,
		map[string]string{"guard.sh": linkGuard})
	var warned []string
	realDir, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolWriteFile, map[string]any{"path": filepath.Join(via, "notes.txt"), "content": "one\n"}},
		{ToolEditFile, map[string]any{"path": filepath.Join(via, "notes.txt"), "old_string": "one", "new_string": "two"}},
	} {
		if res := callCtx(hookCtx(set, &warned), t, ts, c.tool, c.args); res.IsError {
			t.Fatalf("%s in the added directory was refused: %s", c.tool, res.Output)
		}
	}
	if got := readTestFile(t, filepath.Join(realDir, "notes.txt")); got != "two\n" {
		t.Errorf("notes.txt = %q", got)
	}
	if seen := hookPaths(t, filepath.Join(bin, "seen.jsonl")); !slices.Contains(seen, filepath.Join(realDir, "notes.txt")) {
		t.Errorf("the hook was given %q, not the file in the added directory", seen)
	}
}
