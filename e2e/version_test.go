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
// exit 1.
func TestVersionIsAnsweredBeforeThePackagesInitialise(t *testing.T) {
	t.Parallel()
	run := func(env []string, stdout *os.File, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(ralphBin, args...)
		cmd.Env = cleanEnv(t, env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if stdout != nil {
			cmd.Stdout = stdout
		}
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	early, stderr, code := run(nil, nil, "--version")
	if code != 0 || stderr != "" || !regexp.MustCompile(`^ralph \S+\n$`).MatchString(early) {
		t.Fatalf("ralph --version: exit %d, %q, stderr %q", code, early, stderr)
	}
	if tree, _, code := run(nil, nil, "--version", "--json"); code != 0 || tree != early {
		t.Fatalf("--version beside another flag printed %q (exit %d), alone %q", tree, code, early)
	}
	_, trace, _ := run([]string{"GODEBUG=inittrace=1"}, nil, "--version")
	if n := strings.Count(trace, "\ninit ") + 1; n > 40 {
		t.Fatalf("%d packages were initialised before --version was answered, want the few under scripts/startup:\n%s", n, tailOf(trace, 2000))
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	if _, stderr, code := run(nil, full, "--version"); code != 1 || stderr != "ralph: cannot write the version: write /dev/stdout: no space left on device\n" {
		t.Fatalf("--version to a full device: exit %d, stderr %q", code, stderr)
	}
}
