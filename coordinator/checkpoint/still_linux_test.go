package checkpoint

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/git"
)

// TestCheckpointIsTakenWithTheModelsProcessesStill: while a checkpoint's
// git runs, a command left in the background is stopped (state T), and it
// runs again after. A background command swapping a file for a link
// while git read it put ~/.ssh/id_rsa into a checkpoint (the attack's
// REPRO-1), and swapping a directory of .git made git write outside the
// project (REPRO-3).
// Not parallel: the freeze stops every process the test binary started.
func TestCheckpointIsTakenWithTheModelsProcessesStill(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	state := func() string {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return f[0]
	}
	var during string
	if _, err := stillWhile(func() (*git.Checkpoint, error) {
		during = state()
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if during != "T" {
		t.Errorf("the background command's state during the checkpoint was %q, want T (stopped)", during)
	}
	if after := state(); after == "T" {
		t.Errorf("the background command is still stopped after the checkpoint")
	}
}
