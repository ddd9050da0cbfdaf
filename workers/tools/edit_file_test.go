//go:build unix

package tools

import (
	"path/filepath"
	"testing"
)

func TestEditFileListAppliesEveryEditInOrder(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	path := filepath.Join(ts.Root(), "main.go")
	writeTestFile(t, path, "package main\n\nfunc a() {}\nfunc b() {}\nvar x, y = 1, 1\n")
	out := mustOK(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "edits": []map[string]any{
		{"old_string": "func a() {}", "new_string": "func a() {\n\tb()\n}"},
		// The second edit sees the first one's result.
		{"old_string": "\tb()\n", "new_string": "\tb()\n\tb()\n"},
		{"old_string": "1", "new_string": "2", "replace_all": true},
	}}))
	if out != "edited main.go: made 3 edits, replacing 4 lines with 7 lines" {
		t.Fatalf("output %q", out)
	}
	if got := readTestFile(t, path); got != "package main\n\nfunc a() {\n\tb()\n\tb()\n}\nfunc b() {}\nvar x, y = 2, 2\n" {
		t.Fatalf("content %q", got)
	}
	assertNoTempFiles(t, ts.Root())
}

func TestEditFileListIsAllOrNothingAndSaysWhichEditFailed(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	path := filepath.Join(ts.Root(), "a.txt")
	const before = "one\ntwo\ntwo\nthree\n"
	writeTestFile(t, path, before)
	for _, c := range []struct {
		edits []map[string]any
		want  string
	}{
		{[]map[string]any{{"old_string": "one", "new_string": "ONE"}, {"old_string": "four", "new_string": "FOUR"}},
			"edit 2 of 2: old_string not found in a.txt after the edits before it; none of the edits was made"},
		{[]map[string]any{{"old_string": "one", "new_string": "ONE"}, {"old_string": "two", "new_string": "TWO"}},
			"edit 2 of 2: old_string occurs 2 times in a.txt; add surrounding context so it matches exactly once, or set replace_all; none of the edits was made"},
		{[]map[string]any{{"old_string": "one", "new_string": "ONE"}, {"old_string": "ONE", "new_string": "x"}, {"old_string": "one", "new_string": "y"}},
			"edit 3 of 3: old_string not found in a.txt after the edits before it"},
		{[]map[string]any{{"old_string": "one", "new_string": "ONE"}, {"old_string": "three"}},
			"edit 2 of 2: new_string is missing"},
		{[]map[string]any{{"old_string": "", "new_string": "x"}}, "edit 1 of 1: old_string must not be empty"},
		{[]map[string]any{{"old_string": "one", "new_string": "one"}}, "edit 1 of 1: old_string and new_string are identical"},
		{[]map[string]any{}, "edits is empty"},
	} {
		mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "edits": c.edits}), c.want)
		if got := readTestFile(t, path); got != before {
			t.Fatalf("%v: a failed list changed the file to %q", c.edits, got)
		}
	}
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "1",
		"edits": []map[string]any{{"old_string": "two", "new_string": "2"}}}), "either old_string and new_string or edits, not both")
	assertNoTempFiles(t, ts.Root())
}

func TestEditFileSingleEditReplaceAllAndEmptyNewStringDeletes(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	path := filepath.Join(ts.Root(), "a.txt")
	writeTestFile(t, path, "a-b-a-b\n")
	mustOK(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "c", "replace_all": true}))
	mustOK(t, call(t, ts, "edit_file", map[string]any{"path": "a.txt", "old_string": "-b", "new_string": "", "replace_all": true}))
	if got := readTestFile(t, path); got != "c-c\n" {
		t.Fatalf("content %q", got)
	}
}

func TestEditFileListFiresMultiEditHooksWithClaudeCodesShape(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"MultiEdit","hooks":[{"type":"command","command":"{bin}/pre.sh"}]}],`+
		`"PostToolUse":[{"matcher":"MultiEdit","hooks":[{"type":"command","command":"{bin}/post.sh"}]}]}}`,
		map[string]string{"pre.sh": "cat > \"$HOME/pre.json\"\n", "post.sh": "cat > \"$HOME/post.json\"\n"})
	path := filepath.Join(ts.Root(), "a.txt")
	writeTestFile(t, path, "one\ntwo\n")
	var warned []string
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolEditFile, map[string]any{"path": "a.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "ONE"}, {"old_string": "two", "new_string": "TWO", "replace_all": true}}}))
	pre := readJSON(t, filepath.Join(bin, "pre.json"))
	ti, _ := pre["tool_input"].(map[string]any)
	edits, _ := ti["edits"].([]any)
	if pre["tool_name"] != "MultiEdit" || ti["file_path"] != path || len(edits) != 2 || len(ti) != 2 {
		t.Fatalf("PreToolUse input %v: want MultiEdit's {file_path, edits}", pre)
	}
	if e, _ := edits[0].(map[string]any); e["old_string"] != "one" || e["new_string"] != "ONE" || e["replace_all"] != false {
		t.Fatalf("first edit %v: want old_string, new_string and replace_all", edits[0])
	}
	post := readJSON(t, filepath.Join(bin, "post.json"))
	resp, _ := post["tool_response"].(map[string]any)
	if post["tool_name"] != "MultiEdit" || resp["originalFileContents"] != "one\ntwo\n" || resp["filePath"] != path {
		t.Fatalf("PostToolUse input %v", post)
	}
	// The single form is still Edit.
	if got := hookNameFor(ToolEditFile, []byte(`{"path":"a","old_string":"x","new_string":"y"}`)); got != "Edit" {
		t.Fatalf("single edit hook name %q", got)
	}
}
