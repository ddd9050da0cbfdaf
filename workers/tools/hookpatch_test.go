//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPatchFiresClaudeCodesFileHooksForEachFile: a codex model's
// apply_patch is seen by hooks written for Claude Code's file tools, one
// event per file under the tool that change is in Claude Code (Write for
// an added file, Edit for an updated one, MultiEdit for several chunks, a
// Write of nothing for a deleted one); a guard refusing any file refuses
// the whole patch before anything is written; PostToolUse fires for each
// file left.
func TestAPatchFiresClaudeCodesFileHooksForEachFile(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	writeTestFile(t, filepath.Join(ts.Root(), "b.go"), "package b\n\nfunc B() int { return 1 }\n\nfunc C() int { return 2 }\n")
	writeTestFile(t, filepath.Join(ts.Root(), ".env"), "KEY=1\n")
	writeTestFile(t, filepath.Join(ts.Root(), "old.txt"), "old\n")
	set, bin := hookSet(t, ts.Root(), `{"hooks":{
 "PreToolUse":[{"matcher":"Edit|Write|MultiEdit","hooks":[{"type":"command","command":"{bin}/guard.sh"}]}],
 "PostToolUse":[{"matcher":"Edit|Write|MultiEdit","hooks":[{"type":"command","command":"{bin}/post.sh"}]}]}}`,
		map[string]string{
			"guard.sh": `in=$(cat); printf "%s\n" "$in" >> "$HOME/pre.jsonl"
case "$in" in *'.env"'*) echo 'the .env file is protected' >&2; exit 2;; esac`,
			"post.sh": `cat >> "$HOME/post.jsonl"; echo >> "$HOME/post.jsonl"`,
		})
	var warned []string
	patch := "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: b.go\n@@\n-func B() int { return 1 }\n+func B() int { return 10 }\n*** Delete File: old.txt\n*** End Patch\n"
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolApplyPatch, ApplyPatchParams{Input: patch}))
	pre := readTestFile(t, filepath.Join(bin, "pre.jsonl"))
	for _, want := range []string{`"tool_name":"Write"`, `"file_path":"` + filepath.Join(ts.Root(), "new.txt") + `"`, `"content":"hello\n"`,
		`"tool_name":"Edit"`, `"old_string":"func B() int { return 1 }\n"`, `"new_string":"func B() int { return 10 }\n"`,
		`"file_path":"` + filepath.Join(ts.Root(), "old.txt") + `"`} {
		if !strings.Contains(pre, want) {
			t.Errorf("the PreToolUse hooks did not see %s:\n%s", want, pre)
		}
	}
	if n := strings.Count(pre, `"hook_event_name":"PreToolUse"`); n != 3 {
		t.Errorf("PreToolUse fired %d times for a patch of three files", n)
	}
	post := readTestFile(t, filepath.Join(bin, "post.jsonl"))
	if n := strings.Count(post, `"hook_event_name":"PostToolUse"`); n != 2 || strings.Contains(post, "old.txt") {
		t.Errorf("PostToolUse fired %d times, want 2 (not for the deleted file):\n%s", n, post)
	}
	if !strings.Contains(post, `"originalFile":"package b`) {
		t.Errorf("Edit's tool_response lacks the file as it was:\n%s", post)
	}
	// A guard refusing one file refuses the patch: nothing is written.
	res := callCtx(hookCtx(set, &warned), t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Add File: other.txt\n+x\n*** Delete File: .env\n*** End Patch\n"})
	mustErr(t, res, "the .env file is protected")
	mustErr(t, res, "Write of "+filepath.Join(ts.Root(), ".env"))
	if _, err := os.Stat(filepath.Join(ts.Root(), "other.txt")); err == nil {
		t.Error("a refused patch wrote its other file")
	}
	if got := readTestFile(t, filepath.Join(ts.Root(), ".env")); got != "KEY=1\n" {
		t.Errorf(".env = %q", got)
	}
}

// TestAPatchCannotBeRewrittenAFileAtATime: a hook's updatedInput for one
// file of a patch refuses the patch, saying what to use instead.
func TestAPatchCannotBeRewrittenAFileAtATime(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, _ := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"{bin}/rw.sh"}]}]}}`,
		map[string]string{"rw.sh": `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"x","content":"y"}}}'`})
	var warned []string
	res := callCtx(hookCtx(set, &warned), t, ts, ToolApplyPatch, ApplyPatchParams{Input: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"})
	mustErr(t, res, "a patch is applied whole")
	if _, err := os.Stat(filepath.Join(ts.Root(), "a.txt")); err == nil {
		t.Error("the patch was applied")
	}
}
