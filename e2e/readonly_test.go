package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyProjectIsOneSentence: ralph started in a directory it may
// not write to says so in one sentence and exits 2 (bad input), rather
// than exit 1 with a chain of system calls. Root writes anywhere, so as
// root the test runs ralph as nobody.
func TestReadOnlyProjectIsOneSentence(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_hello")
	// Directories nobody can enter: the binary's copy and a home.
	open, err := os.MkdirTemp("", "ralph-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(open, "project"), 0o755); os.RemoveAll(open) })
	bin := filepath.Join(open, "ralph")
	data, err := os.ReadFile(ralphBin)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(open, "home")
	dir := filepath.Join(open, "project")
	for _, d := range []string{home, dir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{open, home} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// The project is nobody's own (ralph keeps no project in another
		// user's directory), and nobody may still not write to it.
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"--base-url", srv.URL, "hi"}, {"--base-url", srv.URL, "-y", "run"}, {"init"}} {
		where := filepath.Join(dir, ".ralph")
		if args[0] == "init" {
			where = dir // the state files go in the project itself
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(t, "OPENAI_API_KEY=k"), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".state"))
		if os.Getuid() == 0 {
			cmd.SysProcAttr = asUser(65534, 65534) // nobody
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := strings.TrimSpace(stderr.String())
		if code != 2 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "ralph: cannot write to "+where+" (permission denied)") {
			t.Fatalf("ralph %q in a read-only project: exit %d, stderr:\n%s", args, code, msg)
		}
	}
}
