package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Hints that are true (issue 57, item 7): every hint ralph gives names
// only what works where it is given.

// In CI a refused command's hint, to the person (stderr) and to the
// model (its tool result, in the stand-in model's request log), names
// --yes and the --allowed-tools rule that allows the command, and never
// recommends --wait-for-answers, which CI ignores. Without a terminal
// outside CI, --wait-for-answers does work, and the hint names it.
func TestRefusalHintNamesOnlyWhatWorks(t *testing.T) {
	const waitWay = "--wait-for-answers to wait"
	for _, tc := range []struct {
		name     string
		env      []string
		args     []string
		wantWait bool
	}{
		{"CI", []string{"CI=true"}, nil, false},
		{"CI with --wait-for-answers", []string{"CI=true"}, []string{"--wait-for-answers"}, false},
		{"no terminal", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
			dir := t.TempDir()
			args := append([]string{"--base-url", srv.URL}, tc.args...)
			r := ralph(t, dir, cleanEnv(t, tc.env...), nil, append(args, "make ran.txt")...)
			if r.code != 0 || exists(filepath.Join(dir, "ran.txt")) {
				t.Fatalf("exit %d, ran.txt %v\n%s", r.code, exists(filepath.Join(dir, "ran.txt")), r.stderr)
			}
			told := toolResults(srv.Requests()[1])["run_command"]
			if len(told) != 1 {
				t.Fatalf("the model was told %q", told)
			}
			var summary string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.Contains(l, "was not run because it needs approval") {
					summary = l
				}
			}
			if summary == "" {
				t.Fatalf("stderr does not say, in the singular, that the command was not run:\n%s", r.stderr)
			}
			for who, hint := range map[string]string{"the model": told[0], "the person": summary} {
				if !strings.Contains(hint, "--yes (-y)") || !strings.Contains(hint, "--allowed-tools 'Bash(echo:*)'") {
					t.Errorf("%s was not told the ways that work (--yes, --allowed-tools 'Bash(echo:*)'): %q", who, hint)
				}
				if got := strings.Contains(hint, waitWay); got != tc.wantWait {
					t.Errorf("%s's hint names %q: %v, want %v: %q", who, waitWay, got, tc.wantWait, hint)
				}
			}
		})
	}
}
