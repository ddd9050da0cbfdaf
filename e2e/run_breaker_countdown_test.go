package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunBreakerCountdownOnStderr: a task loop in the foreground with
// nobody at a terminal (stdout and stderr are pipes) whose breaker opens
// says on stderr how long is left, when it opens and with ten seconds to
// go, rather than sitting silent for the cooldown; plain lines, no
// control sequences, and stdout stays the JSON result.
func TestRunBreakerCountdownOnStderr(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	script, count := filepath.Join(bin, "agent.sh"), filepath.Join(bin, "count")
	mustWrite(t, script, "#!/bin/sh\ncat >/dev/null\nn=$(( $(cat "+count+" 2>/dev/null || echo 0) + 1 ))\necho $n > "+count+
		"\nif [ $n -le 3 ]; then echo 'it broke'; exit 1; fi\necho '<promise>COMPLETE</promise>'\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTasks(t, dir, "a", "b", "c", "d")
	r := ralph(t, dir, cleanEnv(t), nil, "--json", "run", "--agent", "exec:"+script, "--breaker-cooldown", "13s", "--retries", "5")
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["tasks"].(map[string]any)["done"] != 4.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	lines := regexp.MustCompile(`(?m)^ralph: the circuit breaker is open; ralph tries one task again in (\d+)s \(Ctrl-C stops\)$`).FindAllStringSubmatch(r.stderr, -1)
	var left []string
	for _, l := range lines {
		left = append(left, l[1])
	}
	if len(left) != 2 || (left[0] != "13" && left[0] != "12") || left[1] != "10" {
		t.Errorf("the countdown said the time left as %v, want 13s (or 12s) when it opened, then 10s:\n%s", left, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\x1b\r") {
		t.Errorf("stderr, no terminal, holds control sequences: %q", r.stderr)
	}
	open := strings.Index(r.stderr, "ralph: circuit breaker closed → open")
	first := strings.Index(r.stderr, "ralph: the circuit breaker is open;")
	closed := strings.Index(r.stderr, "ralph: circuit breaker half-open → closed")
	if open < 0 || first < open || closed < first {
		t.Errorf("the countdown is not between the breaker's opening and its closing:\n%s", r.stderr)
	}
}
