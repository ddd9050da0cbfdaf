package cli

import (
	"io"
	"os"
	"strings"
	"testing"
)

// mainStderr runs the real command line on args and returns its exit
// code and what it wrote to standard error.
func mainStderr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	code := Main(args, "test", ChatShell{})
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	return code, string(out)
}

// TestFlagTypos: a long flag one typo from a real one is named in one
// sentence, on the root and on subcommands (whose own flags and inherited
// ones both count); one near nothing keeps pflag's message and the
// pointer to --help. Every case is bad input, exit 2.
func TestFlagTypos(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--jsno", "task"}, "ralph: unknown flag --jsno; did you mean --json?\n"},
		{[]string{"--modle", "m", "task"}, "ralph: unknown flag --modle; did you mean --model?\n"},
		{[]string{"--Modle=m", "task"}, "ralph: unknown flag --Modle; did you mean --model?\n"},
		{[]string{"--sanbox", "read-only", "task"}, "ralph: unknown flag --sanbox; did you mean --sandbox?\n"},
		{[]string{"--outptu-fromat", "json", "task"}, "ralph: unknown flag --outptu-fromat; did you mean --output-format?\n"},
		{[]string{"run", "--max-iteratons", "3"}, "ralph: unknown flag --max-iteratons; did you mean --max-iterations?\n"},
		{[]string{"run", "--jsno"}, "ralph: unknown flag --jsno; did you mean --json?\n"},
		{[]string{"logs", "--folow"}, "ralph: unknown flag --folow; did you mean --follow?\n"},
		{[]string{"--dangerously-skip-permission", "task"}, "ralph: unknown flag --dangerously-skip-permission; did you mean --dangerously-skip-permissions?\n"},
		{[]string{"--dangerously-skip-permissions", "--sandbox", "read-only", "task"}, "ralph: --dangerously-skip-permissions runs commands outside the sandbox and cannot go with --sandbox read-only\n"},
		{[]string{"-jsno", "task"}, "ralph: unknown flag -jsno; did you mean --json?\n"},
		{[]string{"-json", "task"}, "ralph: unknown flag -json; did you mean --json?\n"},
		{[]string{"-model", "x", "task"}, "ralph: unknown flag -model; did you mean --model?\n"},
		{[]string{"run", "-max-iterations", "3"}, "ralph: unknown flag -max-iterations; did you mean --max-iterations?\n"},
		{[]string{"--zzzz", "task"}, "ralph: unknown flag: --zzzz\nRun 'ralph --help' for usage.\n"},
		{[]string{"-Q", "task"}, "ralph: unknown shorthand flag: 'Q' in -Q\nRun 'ralph --help' for usage.\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stderr := mainStderr(t, tc.args...)
			if code != ExitUsage || stderr != tc.want {
				t.Errorf("exit %d, stderr %q; want exit %d, %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}
