//go:build linux

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 88, the git ralph runs itself: a sandboxed command replaced
// .gitignore (or .git/info/exclude, or a nested repository's config)
// with a FIFO, and ralph's checkpoint git blocked opening it for ever. A
// one-shot was still running minutes later; SIGTERM did not end it, since
// the run's end waits on its checkpoint under a context no stop ends, and
// the git was cut only after ten minutes. Now ralph ends that git as soon
// as it is blocked on the FIFO, the checkpoint fails in one sentence
// naming the file, and a stop gives any git ralph waits on two seconds.

// gitFIFOLimit is how long a one-shot may take with a FIFO in git's way.
const gitFIFOLimit = 30 * time.Second

// gitFIFOTargets are where the command plants the FIFO, and how.
var gitFIFOTargets = []struct{ name, path, plant string }{
	{"gitignore", ".gitignore", "rm -f .gitignore && mkfifo .gitignore"},
	{"exclude", ".git/info/exclude", "rm -f .git/info/exclude && mkfifo .git/info/exclude"},
	{"nested", "sub/.git/config", "git init -q sub && rm sub/.git/config && mkfifo sub/.git/config"},
}

// startGroup starts ralph in a process group of its own, so that the
// gits it leaves blocked (as the build before the fix did) end with the
// test: they would hold the test's directory for ever.
func startGroup(t *testing.T, proj string, env []string, args ...string) (*exec.Cmd, *lockedBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env = proj, env
	errb := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &lockedBuffer{}, errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The channel gives Wait's error once: the test or the clean-up
	// takes it, and the clean-up only waits for it while it is there.
	done := make(chan error, 1)
	ended := make(chan struct{})
	go func() { done <- cmd.Wait(); close(ended) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-ended
	})
	return cmd, errb, done
}

// exitOf is a finished ralph's exit code.
func exitOf(t *testing.T, err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestAttackGitFIFOEndsTheRun: the checkpoint after the command fails in
// one sentence naming the FIFO, and the one-shot exits non-zero within
// gitFIFOLimit, as for any checkpoint that could not be made.
func TestAttackGitFIFOEndsTheRun(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, target := range gitFIFOTargets {
			t.Run(mode.name+"/"+target.name, func(t *testing.T) {
				t.Parallel()
				proj, home := attackLayout(t)
				srv, _ := a59Server(t, a59Cmd(target.plant+" && echo planted"))
				_, errb, done := startGroup(t, proj, attackEnv(t, home, srv.URL, mode.env), "-y", "set up the pipe")
				select {
				case err := <-done:
					code := exitOf(t, err)
					t.Logf("exit %d\n%s", code, errb.String())
					if !isFIFO(filepath.Join(proj, target.path)) {
						t.Fatalf("the command could not plant the FIFO, so the test proves nothing:\n%s", errb.String())
					}
					if code == 0 {
						t.Fatalf("a checkpoint git could not make passed (exit 0):\n%s", errb.String())
					}
					if want := "a FIFO at " + target.path + " keeps git from reading the project"; !strings.Contains(errb.String(), want) {
						t.Fatalf("ralph did not say %q:\n%s", want, errb.String())
					}
				case <-time.After(gitFIFOLimit):
					t.Fatalf("ralph still ran %s after the model planted a FIFO at %s:\n%s", gitFIFOLimit, target.path, errb.String())
				}
			})
		}
	}
}

// TestAttackGitFIFOSIGTERMEndsRalph: SIGTERM, sent once the FIFO is
// planted (while a checkpoint's git would be blocked on it), ends ralph
// within five seconds.
func TestAttackGitFIFOSIGTERMEndsRalph(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, target := range gitFIFOTargets {
			t.Run(mode.name+"/"+target.name, func(t *testing.T) {
				t.Parallel()
				proj, home := attackLayout(t)
				srv, _ := a59Server(t, a59Cmd(target.plant+" && echo planted"))
				cmd, errb, done := startGroup(t, proj, attackEnv(t, home, srv.URL, mode.env), "-y", "set up the pipe")
				fifo := filepath.Join(proj, target.path)
				deadline := time.Now().Add(gitFIFOLimit)
				for !isFIFO(fifo) {
					if time.Now().After(deadline) {
						t.Fatalf("the command did not plant the FIFO:\n%s", errb.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
				// Time for the checkpoint's git to reach the FIFO.
				time.Sleep(300 * time.Millisecond)
				sent := time.Now()
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					t.Logf("exit %d %s after SIGTERM\n%s", exitOf(t, err), time.Since(sent).Round(time.Millisecond), errb.String())
				case <-time.After(5 * time.Second):
					t.Fatalf("ralph still ran 5s after SIGTERM, with a FIFO at %s:\n%s", target.path, errb.String())
				}
			})
		}
	}
}
