package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoLeavesNothingBehind: make demo's script runs the one-shot end to
// end against the scripted model and removes its project directory at the
// end (RALPH_DEMO_KEEP=1 keeps it), so repeated demos leave no
// ralph-demo.* directories in the temporary directory.
func TestDemoLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"bin", "testdata/scenarios"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"demo.sh", "scenarios/demo.json"} {
		data, err := os.ReadFile(testdata(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "testdata", f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ralphBin, filepath.Join(root, "bin", "ralph")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin", "fakemodel"), "./cmd/fakemodel")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fakemodel: %v\n%s", err, out)
	}
	for _, keep := range []string{"", "1"} {
		tmp := t.TempDir()
		demo := exec.Command("bash", filepath.Join(root, "testdata", "demo.sh"))
		demo.Env = cleanEnv(t, "TMPDIR="+tmp, "RALPH_DEMO_KEEP="+keep)
		out, err := demo.CombinedOutput()
		// The file the demo wrote counts, outside git too.
		if err != nil || !strings.Contains(string(out), `"is_error":false`) || !strings.Contains(string(out), `"files_changed":1,`) {
			t.Fatalf("demo (keep %q): %v\n%s", keep, err, out)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "ralph-demo.*"))
		if keep == "" && len(left) != 0 || keep == "1" && len(left) != 1 {
			t.Fatalf("demo (keep %q) left %v\n%s", keep, left, out)
		}
	}
}
