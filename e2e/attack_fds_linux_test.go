package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackInheritedDescriptorsDoNotReachCommands is issue 56's attack
// on the descriptors ralph inherits (FINDINGS 5): the person runs
// `ralph -y … 7>>~/.bashrc` (a descriptor open for append on a file in
// their home, without close-on-exec) with one end of a connected socket
// pair as descriptor 8, and the model's command writes to both. On
// 1eb6b20 both reached the command through the sandbox helper, in both
// sandboxes: the line landed in ~/.bashrc and on the socket. Now ralph
// marks what it inherits close-on-exec before it starts anything, so the
// command finds neither descriptor open.
func TestAttackInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	t.Parallel()
	for _, fl := range sandboxModes {
		t.Run(fl.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			bashrc, err := os.OpenFile(filepath.Join(home, ".bashrc"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer bashrc.Close()
			pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Non-blocking, so that the read below honours its deadline.
			unix.SetNonblock(pair[0], true)
			mine, theirs := os.NewFile(uintptr(pair[0]), "mine"), os.NewFile(uintptr(pair[1]), "theirs")
			defer mine.Close()
			srv, results := commandsServer(t,
				`{ echo E2E-FD7-PAYLOAD >&7; } 2>/dev/null && echo wrote7 || echo closed7`,
				`{ echo E2E-FD8-PAYLOAD >&8; } 2>/dev/null && echo wrote8 || echo closed8`,
				`ls /proc/self/fd; echo done`)
			cmd := exec.Command(ralphBin, "-y", "set up the descriptors")
			cmd.Dir, cmd.Env = proj, attackEnv(t, home, srv.URL, fl.env)
			// Descriptors 3 to 6 closed, 7 the person's ~/.bashrc, 8
			// the socket: the shell's `7>>~/.bashrc 8<>…`.
			cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, bashrc, theirs}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			theirs.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(ralphRunLimit):
				cmd.Process.Kill()
				t.Fatalf("ralph still ran after %s:\n%s", ralphRunLimit, out.String())
			}
			res := results()
			if err != nil || !strings.Contains(res, "done") {
				t.Fatalf("ralph: %v\n%s\n%s", err, out.String(), res)
			}
			t.Logf("the model saw:\n%s", res)
			// Every copy of the other end is gone with ralph, so the read
			// ends at once: with the payload, or with nothing.
			mine.SetReadDeadline(time.Now().Add(5 * time.Second))
			got := make([]byte, 256)
			n, _ := mine.Read(got)
			if n > 0 {
				t.Errorf("the command wrote to the inherited socket: %q", got[:n])
			}
			wantBashrc(t, home)
			for _, bad := range []string{"wrote7", "wrote8"} {
				if strings.Contains(res, bad) {
					t.Errorf("the command could write to an inherited descriptor (%s)", bad)
				}
			}
		})
	}
}
