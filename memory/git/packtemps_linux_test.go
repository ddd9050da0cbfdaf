package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestGroupTempsAreTheFilesItWrites: the temporary files of a stopped
// pack are those its processes hold open for writing. A pack a command
// named tmp_… in the pack directory, which git reads as any other pack,
// is held open for reading only, and is no temporary file to remove: it
// was removed at a stop, and with it the person's history.
func TestGroupTempsAreTheFilesItWrites(t *testing.T) {
	t.Parallel()
	packDir := t.TempDir()
	for _, name := range []string{"tmp_pack_evil.pack", "tmp_pack_new"} {
		if err := os.WriteFile(filepath.Join(packDir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-c", "exec 3<tmp_pack_evil.pack 4>>tmp_pack_new 5<>tmp_pack_new; echo ready; exec sleep 30")
	cmd.Dir = packDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		// sleep has taken bash's place once /proc shows it.
		if got = groupTemps(cmd.Process.Pid, packDir); len(got) > 0 {
			break
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"tmp_pack_new", "tmp_pack_new"}) {
		t.Fatalf("groupTemps = %q, want tmp_pack_new (written, twice) and not tmp_pack_evil.pack (read)", got)
	}
}
