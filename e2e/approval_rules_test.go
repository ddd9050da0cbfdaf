package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The end-to-end test of issue 68's item 4 follow-up: a Bash allow rule
// in the person's ~/.claude/settings.json allows what Claude Code allows
// for it, word by word, and no more: Bash(ls) is bare `ls` only, and
// Bash(npm run test:*) is `npm run test` with any arguments, not every
// `npm run`.

// TestFirsthour2RulesExactAndPrefix: with allow Bash(npm run test:*) and
// Bash(ls), no terminal and no -y, `ls` and `npm run test` run unasked,
// while `ls -la` and `npm run build` are refused as unapproved, the hint
// naming a rule that would allow them.
func TestFirsthour2RulesExactAndPrefix(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(npm run test:*)","Bash(ls)"]}}`)
	mustWrite(t, filepath.Join(proj, "marker-h68.txt"), "x\n")
	// A stand-in npm that says what it was asked to do.
	bin := filepath.Join(filepath.Dir(home), "bin")
	mustWrite(t, filepath.Join(bin, "npm"), "#!/bin/sh\necho \"stub-npm ran: $*\"\n")
	if err := os.Chmod(filepath.Join(bin, "npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv, log := a59Server(t, a59Cmd("ls"), a59Cmd("ls -la"), a59Cmd("npm run build"), a59Cmd("npm run test"))
	r := ralph(t, proj, attackEnv(t, home, srv.URL, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}), nil, "set up")
	_, results := log()
	parts := strings.Split(results, "\n---\n")
	if len(parts) != 4 {
		t.Fatalf("exit %d, tool results:\n%s\nstderr:\n%s", r.code, results, r.stderr)
	}
	if !strings.Contains(parts[0], "marker-h68.txt") {
		t.Fatalf("`ls` did not run under allow Bash(ls):\n%s\nstderr:\n%s", parts[0], r.stderr)
	}
	for i, want := range map[int]string{1: "Bash(ls:*)", 2: "Bash(npm run:*)"} {
		if !strings.Contains(parts[i], "needs approval") || strings.Contains(parts[i], "marker-h68.txt") || strings.Contains(parts[i], "stub-npm ran") {
			t.Fatalf("BROKEN: a command the rules do not name ran unasked:\n%s", parts[i])
		}
		if !strings.Contains(parts[i], want) {
			t.Fatalf("the hint does not suggest %s:\n%s", want, parts[i])
		}
	}
	if !strings.Contains(parts[3], "stub-npm ran: run test") {
		t.Fatalf("`npm run test` did not run under allow Bash(npm run test:*):\n%s\nstderr:\n%s", parts[3], r.stderr)
	}
}
