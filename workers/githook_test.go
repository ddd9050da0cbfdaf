package workers_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// TestRunHookRunsInTheSandbox: a git hook of the person's runs the
// tree's code, so RunHook holds it as a verify command: it may write the
// project and the directory HookDir made, and not outside; its failure
// says how it ended and names no way out the model could take. Under
// danger-full-access it runs as the commands do.
func TestRunHookRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w, err := workers.NewWorkspace(workers.Options{Root: root, Sandbox: sandbox.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var _ git.HookRunner = w
	dir, err := w.HookDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	outside := workerstest.OutsideDir(t)
	hook := filepath.Join(t.TempDir(), "pre-commit")
	body := "#!/bin/sh\necho \"$1 $GIT_INDEX_FILE\" > in-project && echo copy > \"$GIT_INDEX_FILE\" && echo x > \"$2\"/escape\n"
	if err := os.WriteFile(hook, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index")
	out, err := w.RunHook(context.Background(), hook, []string{"arg", outside}, []string{"GIT_INDEX_FILE=" + index}, root)
	if err == nil || errors.Is(err, git.ErrHookNotRun) || !strings.HasPrefix(err.Error(), "exit status") {
		t.Fatalf("a hook writing outside: %v\n%s", err, out)
	}
	if _, serr := os.Stat(filepath.Join(outside, "escape")); serr == nil {
		t.Fatal("the hook wrote outside the project")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "in-project")); string(b) != "arg "+index+"\n" {
		t.Fatalf("the hook did not write the project (workspace-write, as verify): %q\n%s", b, out)
	}
	if b, _ := os.ReadFile(index); string(b) != "copy\n" {
		t.Fatalf("the hook could not write HookDir's directory: %q\n%s", b, out)
	}
	if strings.Contains(out, `"unsandboxed": true`) {
		t.Fatalf("the hook's output names a way out: %s", out)
	}

	off, err := workers.NewWorkspace(workers.Options{Root: root, Sandbox: sandbox.FullAccess})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if out, err := off.RunHook(context.Background(), hook, []string{"arg", outside}, []string{"GIT_INDEX_FILE=" + index}, root); err != nil {
		t.Fatalf("with the sandbox off the hook runs as the commands do: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); err != nil {
		t.Fatal("with the sandbox off the hook did not run as the person")
	}
}
