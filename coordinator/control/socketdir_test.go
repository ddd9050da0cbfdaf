package control

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketNotInTheTemporaryDirectory: an XDG_RUNTIME_DIR in the
// temporary directory (as CI sets it) is one the model's commands may
// write: a command removed the socket there and `ralph stop` found no
// ralph to stop. The socket goes to ralph's state directory instead; a
// runtime directory elsewhere is used as before.
func TestSocketNotInTheTemporaryDirectory(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	root := filepath.Join(t.TempDir(), "proj")
	env := func(runtime string) func(string) string {
		return func(k string) string {
			switch k {
			case "XDG_RUNTIME_DIR":
				return runtime
			case "RALPH_HOME":
				return state
			}
			return ""
		}
	}
	inTmp := filepath.Join(os.TempDir(), "run-1000")
	if got := SocketPathIn(root, 42, env(inTmp)); strings.HasPrefix(got, inTmp) || !strings.HasPrefix(got, state) {
		t.Errorf("runtime dir %s in the temporary directory: socket %s, want one under %s", inTmp, got, state)
	}
	if got := SocketPathIn(root, 42, env("/run/user/1000")); !strings.HasPrefix(got, "/run/user/1000/ralph/") {
		t.Errorf("runtime dir /run/user/1000: socket %s", got)
	}
}
