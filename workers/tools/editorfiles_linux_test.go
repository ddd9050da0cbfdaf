package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditorWritesAreCheckedByTheNestedGuard: a write through the editor
// is a step the nested guard checks after, as a write to the disk is. An
// editor that, asked to write sub/x.txt, also plants core.fsmonitor in
// the nested repository's git directory (as one that followed a link
// swapped in after ralph's last look would) has the key taken back, and
// the result names the call; a write of the git directory's own files is
// refused before the editor is asked.
func TestEditorWritesAreCheckedByTheNestedGuard(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := evalRoot(t)
	for _, args := range [][]string{{"init", "-q"}, {"init", "-q", "--separate-git-dir=gd", "sub"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ed := newFakeEditor()
	ed.onWrite = func(abs, content string) {
		writeTestFile(t, abs, content)
		f, err := os.OpenFile(filepath.Join(root, "gd", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteString("[core]\n\tfsmonitor = planted-by-the-editor\n"); err != nil {
			t.Error(err)
		}
	}
	ts := editorTools(t, root, ed, Options{})
	out := mustOK(t, call(t, ts, "write_file", map[string]any{"path": "sub/x.txt", "content": "x\n"}))
	if want := "took back core.fsmonitor in gd/config, which this call of write_file (sub/x.txt) set"; !strings.Contains(out, want) {
		t.Errorf("the result does not say %q:\n%s", want, out)
	}
	if strings.Contains(readTestFile(t, filepath.Join(root, "gd", "config")), "fsmonitor") {
		t.Error("the planted key outlived the call")
	}
	before := len(ed.made())
	for _, p := range []string{"gd/config", "gd/hooks/pre-commit", "sub/.git"} {
		mustErr(t, call(t, ts, "write_file", map[string]any{"path": p, "content": "planted\n"}), "cannot write "+p)
	}
	if made := ed.made(); len(made) != before {
		t.Errorf("the editor was asked about a git directory's files: %q", made[before:])
	}
}
