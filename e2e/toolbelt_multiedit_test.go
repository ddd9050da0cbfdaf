package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditFileListIsMultiEdit (issue 70): edit_file with a list of edits
// applies them all in one write, fires the person's MultiEdit hook with
// Claude Code's {file_path, edits} input, and is taken back whole by one
// undo; a list whose second edit does not match changes nothing, and the
// model is told which edit failed and why.
func TestEditFileListIsMultiEdit(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(proj, "notes.txt"), "one\ntwo\nthree\n")
	shIn(t, proj, "git add notes.txt && git commit -qm notes")
	hook, _ := json.Marshal(`d="$CLAUDE_PROJECT_DIR/rec"; mkdir -p "$d"; cat > "$d/$(date +%s%N).json"`)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"),
		fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"MultiEdit","hooks":[{"type":"command","command":%s}]}]}}`, hook))
	srv := inlineServer(t, toolScenario(t, "multi-edit", [][]toolCall{
		{{"edit_file", `{"path":"notes.txt","edits":[{"old_string":"one","new_string":"ONE"},{"old_string":"ONE\ntwo","new_string":"ONE\nTWO"}]}`}},
		{{"edit_file", `{"path":"notes.txt","edits":[{"old_string":"three","new_string":"THREE"},{"old_string":"four","new_string":"FOUR"}]}`}},
	}, "Edited the notes."))
	env := attackEnv(t, home, srv.URL, nil)
	r := ralph(t, proj, env, nil, "-y", "edit the notes")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(proj, "notes.txt")); got != "ONE\nTWO\nthree\n" {
		t.Fatalf("notes.txt = %q, want both edits of the first list and none of the second", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	msgs := reqs[1].Request.Messages
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "edited notes.txt: made 2 edits") {
		t.Fatalf("the first list's result: %q", last.Content)
	}
	msgs = reqs[2].Request.Messages
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "edit 2 of 2: old_string not found in notes.txt") ||
		!strings.Contains(last.Content, "none of the edits was made") {
		t.Fatalf("the failed list's result: %q, want which edit failed and that nothing was written", last.Content)
	}
	files, _ := filepath.Glob(filepath.Join(proj, "rec", "*.json"))
	if len(files) != 2 {
		t.Fatalf("the MultiEdit hook fired %d times, want 2", len(files))
	}
	var in struct {
		ToolName  string `json:"tool_name"`
		ToolInput struct {
			FilePath string `json:"file_path"`
			Edits    []struct {
				OldString  string `json:"old_string"`
				NewString  string `json:"new_string"`
				ReplaceAll *bool  `json:"replace_all"`
			} `json:"edits"`
		} `json:"tool_input"`
	}
	first := readFileT(t, files[0])
	if err := json.Unmarshal([]byte(first), &in); err != nil {
		t.Fatal(err)
	}
	if in.ToolName != "MultiEdit" || in.ToolInput.FilePath != filepath.Join(proj, "notes.txt") || len(in.ToolInput.Edits) != 2 ||
		in.ToolInput.Edits[1].NewString != "ONE\nTWO" || in.ToolInput.Edits[0].ReplaceAll == nil || *in.ToolInput.Edits[0].ReplaceAll {
		t.Fatalf("the hook's input %s: want MultiEdit's {file_path, edits:[{old_string, new_string, replace_all}]}", first)
	}
	u := ralph(t, proj, env, nil, "undo")
	if u.code != 0 || readFileT(t, filepath.Join(proj, "notes.txt")) != "one\ntwo\nthree\n" {
		t.Fatalf("ralph undo: exit %d, notes.txt %q\n%s%s", u.code, readFileT(t, filepath.Join(proj, "notes.txt")), u.stdout, u.stderr)
	}
}
