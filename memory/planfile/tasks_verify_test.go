package planfile

import "testing"

func TestTaskVerify(t *testing.T) {
	f := ParseTasks([]byte("- [ ] one <!-- ralph:id=t1 -->\n  Acceptance criteria:\n  - Verify: `go test ./calc` passes\n" +
		"- [ ] two <!-- ralph:id=t2 -->\n  verify: make check\n  VERIFY: `true`\n" +
		"- [ ] three <!-- ralph:id=t3 -->\n  verifying by hand is fine\n  - [ ] a subtask <!-- ralph:id=t4 -->\n    verify: echo sub\n"))
	for id, want := range map[string]string{"t1": "go test ./calc", "t2": "make check && true", "t3": "", "t4": "echo sub", "t9": ""} {
		if got := f.Verify(id); got != want {
			t.Errorf("Verify(%s) = %q, want %q", id, got, want)
		}
	}
}
