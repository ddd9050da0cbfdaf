package proctree

import (
	"os/exec"
	"testing"
)

// TestFollowPeakRSSIsTheChildsOwn: a child of a process holding 200 MB is
// followed at its own size, not its parent's, which wait4's rusage
// reports for it.
func TestFollowPeakRSSIsTheChildsOwn(t *testing.T) {
	ballast := make([]byte, 200<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	cmd := exec.Command("sleep", "0.2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := FollowPeakRSS(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	peak := stop()
	if peak <= 0 || peak > 50<<20 {
		t.Fatalf("sleep's peak %d MB, want its own few MB (wait4 says %d MB)", peak>>20, MaxRSS(cmd.ProcessState)>>20)
	}
	t.Logf("followed %d KB; wait4 says %d MB", peak>>10, MaxRSS(cmd.ProcessState)>>20)
	_ = ballast[len(ballast)-1]
}
