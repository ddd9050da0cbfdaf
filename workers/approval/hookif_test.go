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
		{"Edit(**/*.ts)", "Edit", map[string]any{"file_path": "/p/src/a.ts"}, true, false},
		{"Edit(src/*.ts)", "Edit", map[string]any{"file_path": "/p/src/a.ts"}, false, true}, // no root: runs the hook
		{"Edit(//p/src/*.ts)", "Edit", map[string]any{"file_path": "/p/src/a.ts"}, true, false},
		{"Bash(bash -c x:*)", "Bash", map[string]any{"command": "ls"}, false, true},
		{"Bash(oops", "Bash", map[string]any{"command": "ls"}, false, true},
	} {
		got, err := HookIf(c.rule, c.tool, c.input)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("HookIf(%q, %q, %v) = %v, %v; want %v, error %v", c.rule, c.tool, c.input, got, err, c.want, c.err)
		}
	}
}

// TestHookIfAtTheRoot: with the project's root a path condition is read
// as a permission rule is: Edit(src/*.ts) from the root, ** at any depth,
// the top included.
func TestHookIfAtTheRoot(t *testing.T) {
	at := HookIfAt("/p")
	for _, c := range []struct {
		rule, path string
		want       bool
	}{
		{"Edit(src/*.ts)", "/p/src/a.ts", true},
		{"Edit(src/*.ts)", "/p/lib/src/a.ts", false},
		{"Edit(**/secret.txt)", "/p/secret.txt", true},
		{"Edit(/src/**)", "/p/src/x/a.ts", true},
		{"Edit(*.ts)", "/p/a.go", false},
	} {
		if got, err := at(c.rule, "Edit", map[string]any{"file_path": c.path}); got != c.want || err != nil {
			t.Errorf("%s on %s = %v, %v; want %v", c.rule, c.path, got, err, c.want)
		}
	}
}
