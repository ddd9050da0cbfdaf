package approval

import "testing"

func TestHookIf(t *testing.T) {
	for _, c := range []struct {
		rule, tool string
		input      map[string]any
		want, err  bool
	}{
		{"Bash(git commit:*)", "Bash", map[string]any{"command": "git commit -m x"}, true, false},
		{"Bash(git commit:*)", "Bash", map[string]any{"command": "git add . && git commit -m x"}, true, false},
		{"Bash(git commit:*)", "Bash", map[string]any{"command": "git status"}, false, false},
		{"Bash(git commit:*)", "Write", map[string]any{"file_path": "a"}, false, false},
		{"Bash", "Bash", map[string]any{"command": "ls"}, true, false},
		{"Edit(*.ts)", "Edit", map[string]any{"file_path": "/p/src/a.ts"}, true, false},
		{"Edit(*.ts)", "Edit", map[string]any{"file_path": "/p/src/a.go"}, false, false},
		{"Bash(bash -c x:*)", "Bash", map[string]any{"command": "ls"}, false, true},
		{"Bash(oops", "Bash", map[string]any{"command": "ls"}, false, true},
	} {
		got, err := HookIf(c.rule, c.tool, c.input)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("HookIf(%q, %q, %v) = %v, %v; want %v, error %v", c.rule, c.tool, c.input, got, err, c.want, c.err)
		}
	}
}
