package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	for _, mode := range []struct {
		name string
		env  []string
	}{{"default", nil}, {"fallback", []string{"RALPH_SANDBOX_NO_USERNS=1"}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj, tmp := filepath.Join(base, "proj"), filepath.Join(base, "tmp")
			remote := filepath.Join(tmp, "remote.git")
			for _, d := range []string{proj, tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			gitIn(t, base, "git init -q --bare -b main "+remote)
			gitIn(t, proj, "git init -q -b main && echo one > a.txt && git add a.txt && git commit -qm one && "+
				"git remote add origin "+remote+" && git push -q origin main && echo two > a.txt && git commit -qam two")
			before := askGitRefs(t, remote)

			var turns [][]toolCall
			for _, c := range pushes {
				js, _ := json.Marshal(map[string]string{"command": c})
				turns = append(turns, []toolCall{{"run_command", string(js)}})
			}
			srv := inlineServer(t, toolScenario(t, "inlinepush", turns, "Pushed."))
			env := cleanEnv(t, append(append([]string{"CI=true", "TMPDIR=" + tmp}, gitEnv...), mode.env...)...)
			mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), `ask_before = ["git push*"]`+"\n")
			r := ralph(t, proj, env, nil, "--base-url", srv.URL, "-y", "--json", "push it")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if after := askGitRefs(t, remote); after != before {
				t.Errorf("a push inside an inline program reached the remote under -y with ask_before \"git push*\":\nbefore %s\nafter  %s", before, after)
			}
			reqs := srv.Requests()
			if len(reqs) != len(pushes)+1 {
				t.Fatalf("%d requests to the model, want %d", len(reqs), len(pushes)+1)
			}
			for i, c := range pushes {
				msgs := reqs[i+1].Request.Messages
				got := msgs[len(msgs)-1].Content
				if !strings.Contains(got, `needs a person's approval (ask_before "git push*" in the config) and nobody can be asked here`) {
					t.Errorf("%s: the model was told %q, not that it needs a person's approval", c, got)
				}
			}
		})
	}
}
