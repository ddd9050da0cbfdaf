package tools

import (
	"encoding/json"
	"testing"
)

// The structuredPatch and Read's file object are as the real Claude Code
// gave them for the same change (testdata/claude-code-transcript).
func TestHookResponsePatchAndReadAreClaudeCodes(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{"one\ntwo\nthree\n", "one\nTWO\nthree\n", `[{"oldStart":1,"oldLines":3,"newStart":1,"newLines":3,"lines":[" one","-two","+TWO"," three"]}]`},
		{"one\nTWO\nthree\n", "rewritten\n", `[{"oldStart":1,"oldLines":3,"newStart":1,"newLines":1,"lines":["-one","-TWO","-three","+rewritten"]}]`},
		{"a\n", "a\n", `[]`},
		{"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nX\n6\n7\n8\n", `[{"oldStart":2,"oldLines":7,"newStart":2,"newLines":7,"lines":[" 2"," 3"," 4","-5","+X"," 6"," 7"," 8"]}]`},
	} {
		got, _ := json.Marshal(patch(tc.old, tc.new))
		if string(got) != tc.want {
			t.Errorf("patch(%q, %q) = %s, want %s", tc.old, tc.new, got, tc.want)
		}
	}
	got, _ := json.Marshal(readSlice("/p/notes.txt", "one\nTWO\nthree\n", 0, 0))
	if want := `{"content":"one\nTWO\nthree\n","filePath":"/p/notes.txt","numLines":4,"startLine":1,"totalLines":4}`; string(got) != want {
		t.Errorf("readSlice = %s, want %s", got, want)
	}
}
