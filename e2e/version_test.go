package e2e

import (
	"bytes"
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
// exit 1, as it is for `ralph version`.
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
	// ralph's helper runs take their output in buffers; a full device
	// needs the command's own standard output.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	// `ralph version`, which initialises every package and prints its
	// line through the command tree, says so too.
	for _, arg := range []string{"--version", "version"} {
		cmd := exec.Command(ralphBin, arg)
		cmd.Env, cmd.Stdout = cleanEnv(t), full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || stderr.String() != "ralph: cannot write the version: write /dev/stdout: no space left on device\n" {
			t.Fatalf("ralph %s to a full device: %v, stderr %q", arg, err, stderr.String())
		}
	}
}

// A command that prints a record (status, sessions, config) or a task's
// answer (in each format) to a device that is full fails with one
// sentence and exit 1: the output was not delivered, and a script reading
// it must not take the empty output for an answer.
func TestARecordCutShortByAFullDeviceFailsTheCommand(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	dir, env := t.TempDir(), cleanEnv(t)
	srv := inlineServer(t, `{"name":"hi","loop":true,"responses":[{"text":"hi"}]}`)
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"sessions"}, {"config"},
		{"--base-url", srv.URL, "say hi"}, {"--base-url", srv.URL, "--json", "say hi"}, {"--base-url", srv.URL, "--output-format", "stream-json", "say hi"}} {
		cmd := exec.Command(ralphBin, args...)
		cmd.Dir, cmd.Env, cmd.Stdout = dir, env, full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !regexp.MustCompile(`^ralph: (cannot write the output: )?write /dev/stdout: no space left on device\n$`).MatchString(stderr.String()) {
			t.Errorf("ralph %s to a full device: %v, stderr %q", strings.Join(args, " "), err, stderr.String())
		}
	}
}
