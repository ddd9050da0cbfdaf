package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// `ralph --version` alone is answered by the first of ralph's packages to
// be initialised (scripts/startup), before the 200 others: the line the
// command tree's version template prints for --version beside other
// words, on standard output, and a write that fails is one sentence and
// exit 1, in the words of every other command
// (TestARecordCutShortByAFullDeviceFailsTheCommand).
func TestVersionIsAnsweredBeforeThePackagesInitialise(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--version")
	if r.code != 0 || r.stderr != "" || !regexp.MustCompile(`^ralph \S+\n$`).MatchString(r.stdout) {
		t.Fatalf("ralph --version: exit %d, %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if tree := ralph(t, dir, cleanEnv(t), nil, "--version", "--json"); tree.code != 0 || tree.stdout != r.stdout {
		t.Fatalf("--version beside another flag printed %q (exit %d), alone %q", tree.stdout, tree.code, r.stdout)
	}
	trace := ralph(t, dir, cleanEnv(t, "GODEBUG=inittrace=1"), nil, "--version").stderr
	if n := strings.Count(trace, "\ninit ") + 1; n > 40 {
		t.Fatalf("%d packages were initialised before --version was answered, want the few under scripts/startup:\n%s", n, tailOf(trace, 2000))
	}
	code, stderr := toFullDevice(t, dir, cleanEnv(t), "--version")
	if code != 1 || stderr != "ralph: cannot write the output: write /dev/stdout: no space left on device\n" {
		t.Fatalf("ralph --version to a full device: exit %d, stderr %q", code, stderr)
	}
}

// toFullDevice runs ralph with args in dir, its standard output the full
// device, and returns its exit code and standard error. ralph's helper
// runs take their output in buffers; a full device needs the command's
// own standard output.
func toFullDevice(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env, cmd.Stdout = dir, env, full
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ralph %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// A command that prints to a device that is full fails with one sentence
// and exit 1, whatever prints it: the command tree (the version, help), a
// record (status, sessions, config) or a task's answer (in each format).
// The output was not delivered, and a script reading it must not take
// the empty output for an answer.
func TestARecordCutShortByAFullDeviceFailsTheCommand(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	srv := inlineServer(t, `{"name":"hi","loop":true,"responses":[{"text":"hi"}]}`)
	said := regexp.MustCompile(`^ralph: (cannot write the output: )?write /dev/stdout: no space left on device\n$`)
	for _, args := range [][]string{{"version"}, {"--version", "--json"}, {"--help"}, {"help", "status"},
		{"status"}, {"status", "--json"}, {"sessions"}, {"config"},
		{"--base-url", srv.URL, "say hi"}, {"--base-url", srv.URL, "--json", "say hi"}, {"--base-url", srv.URL, "--output-format", "stream-json", "say hi"}} {
		if code, stderr := toFullDevice(t, dir, env, args...); code != 1 || !said.MatchString(stderr) {
			t.Errorf("ralph %s to a full device: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
}
