package proctree

import (
	"os"
	"os/exec"
	"testing"
)

// TestMemoryIsTheProcesssOwn: a child of a process holding 200 MB is
// read at its own size, not its parent's, which wait4's rusage reports
// for it; and a process's own peak is at least what it holds now.
func TestMemoryIsTheProcesssOwn(t *testing.T) {
	t.Parallel()
	ballast := make([]byte, 200<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	rss, peak := Memory(os.Getpid())
	if rss < 200<<20 || peak < rss {
		t.Fatalf("own memory: %d MB now, %d MB at most; want at least the 200 MB held", rss>>20, peak>>20)
	}
	cmd := exec.Command("sleep", "0.2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rss, peak = Memory(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if peak <= 0 || peak > 50<<20 || rss > peak {
		t.Fatalf("sleep's memory %d KB, peak %d KB, want its own few MB (wait4 says %d MB)", rss>>10, peak>>10, MaxRSS(cmd.ProcessState)>>20)
	}
	t.Logf("sleep: %d KB at most; wait4 says %d MB", peak>>10, MaxRSS(cmd.ProcessState)>>20)
	if gone, _ := Memory(cmd.Process.Pid); gone != 0 {
		t.Fatalf("a process waited for still reads %d KB", gone>>10)
	}
	_ = ballast[len(ballast)-1]
}
