//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestMaxWaitZeroOnTheInProgressMark: with --max-wait 0 a full disk that
// refuses the task's in-progress mark (ENOSPC on the write of the mark
// into the task file, injected by strace) ends the run at once, exit 1,
// in one sentence that says ralph does not wait, where the loop used to
// wait for space until it was killed; the task is never worked (issue
// 89, item 5).
func TestMaxWaitZeroOnTheInProgressMark(t *testing.T) {
	t.Parallel()
	needTool(t, "strace", "strace")
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	dir := t.TempDir()
	// Tasks with ids: the first rewrite of the task file is the mark.
	tasks := "# Tasks\n\n- [ ] task 01 <!-- ralph:id=t1 -->\n- [ ] task 02 <!-- ralph:id=t2 -->\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "strace")
	const fault = "write:error=ENOSPC:when=1"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "strace", append(straceArgs(dir, "RALPH_TASKS.md", fault, out), ralphBin, "-y", "--json", "run", "--max-wait", "0")...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("with --max-wait 0 the run still waited for space after %s:\n%s", time.Since(start).Round(time.Second), stderr.String())
	}
	log, _ := os.ReadFile(out)
	if !injected(string(log), fault) {
		t.Fatalf("strace injected nothing:\n%s", log)
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "is full") || !strings.Contains(stderr.String(), "(ralph does not wait with --max-wait 0)") {
		t.Errorf("the run does not say the disk is full and that it does not wait:\n%s", stderr.String())
	}
	if work, err := os.ReadFile(filepath.Join(dir, "work.log")); err == nil {
		t.Errorf("a task was worked though its mark could not be written:\n%s", work)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); string(got) != tasks {
		t.Errorf("the task file changed:\n%s", got)
	}
}
