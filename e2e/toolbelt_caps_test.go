//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEditOfAHugeSparseFileIsRefusedInSmallMemory (issue 70): a model
// can make a file of any size for free (truncate -s 1G, a sparse file)
// and ask edit_file to change it; ralph held such a file whole several
// times over (13 GB for 3 GB). Now it is refused by its size before it is
// read: one sentence back to the model naming the size and the bound,
// the run finishes, the file is untouched and ralph's peak memory stays
// small.
func TestEditOfAHugeSparseFileIsRefusedInSmallMemory(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	big := filepath.Join(proj, "big.txt")
	mustWrite(t, big, "a\n")
	if err := os.Truncate(big, 4<<30); err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, toolScenario(t, "huge-edit", [][]toolCall{
		{{"edit_file", `{"path":"big.txt","old_string":"a","new_string":"b"}`}},
	}, "The file is too large to edit."))
	stats, peakRSS := ownPeak(t)
	env := attackEnv(t, home, srv.URL, []string{stats})
	cmd := exec.Command(ralphBin, "-y", "edit big.txt")
	cmd.Dir, cmd.Env = proj, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(ralphRunLimit, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
	err := cmd.Wait()
	hung.Stop()
	if err != nil {
		t.Fatalf("ralph: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the call and the answer after its result)", len(reqs))
	}
	msgs := reqs[1].Request.Messages
	const want = "cannot edit big.txt: it is 4.0 GB, more than the 16.0 MB the file tools edit; use run_command (sed, a script) for a file this large"
	if last := msgs[len(msgs)-1]; strings.TrimSpace(last.Content) != want {
		t.Fatalf("edit_file's result: %q, want %q", last.Content, want)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != 4<<30 {
		t.Fatalf("big.txt after the refusal: %v, %v", fi, err)
	}
	// ralph's own peak resident memory, as it read it at exit (ownPeak):
	// reading the file would have taken more than 4 GB. A race-detector
	// build's own memory varies with the machine's load (588 MB once in
	// the whole suite), so its bound is only well under the file's size.
	peak, bound := peakRSS()>>20, int64(200)
	if raceEnabled {
		bound = 1500
	}
	t.Logf("ralph's peak RSS: %d MB", peak)
	if peak > bound {
		t.Fatalf("ralph's peak RSS was %d MB, want it small (under %d MB)", peak, bound)
	}
}
