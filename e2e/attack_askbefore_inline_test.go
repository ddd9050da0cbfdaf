package e2e

import (
	"os/exec"
	"testing"
)

// Issue 66, round 2: `ask_before = ["git push*"]` judged only shell
// command lines, so a push inside a program given inline to an
// interpreter (`python3 -c`, `perl -e`, an awk program) ran under -y with
// nobody asked. Each push goes to a bare remote in the temporary
// directory, which commands may write, so on the old code it lands; now
// each is refused with the ask_before sentence the model reads, and the
// remote's refs stay as they were.

// inlinePushes are the model's pushes through interpreters, each to a
// branch of its own, keyed by the interpreter they need.
var inlinePushes = []struct{ needs, command string }{
	{"python3", `python3 -c "import os; os.system('git push -q origin main:refs/heads/python')"`},
	{"perl", `perl -e 'system(qw(git push -q origin main:refs/heads/perl))'`},
	{"awk", `awk 'BEGIN{system("git push -q origin main:refs/heads/awk")}'`},
}

func TestAttack66bInlineInterpreterPushHeldByAskBefore(t *testing.T) {
	t.Parallel()
	var pushes []string
	for _, p := range inlinePushes {
		if _, err := exec.LookPath(p.needs); err == nil {
			pushes = append(pushes, p.command)
		}
	}
	if len(pushes) == 0 {
		t.Skip("no interpreter on this machine")
	}
	assertPushesHeld(t, "inlinepush", pushes, "a push inside an inline program")
}
