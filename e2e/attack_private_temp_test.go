package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttack88PrivateTempIsTheSessionsOwn (issue 88, cause 5): two
// sessions of the person's, with their home in the temporary directory as
// on CI, each get a "private" temporary directory there (ralph-tmp-…).
// Session B's exists when session A's sandbox starts, and A's grant of
// the temporary directory around the home used to grant every entry of
// it: A's command wrote into B's directory, where B keeps its git hooks'
// index copy and message and its commands their build caches. Now A's
// command may write its own private directory and no other session's,
// in the default sandbox and in the Landlock-only fallback.
func TestAttack88PrivateTempIsTheSessionsOwn(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(base, "tmp")
			home := filepath.Join(tmp, "home")
			projA, projB := filepath.Join(base, "a"), filepath.Join(base, "b")
			for _, d := range []string{projA, projB, filepath.Join(home, ".ssh")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			gitProject(t, projA)
			gitProject(t, projB)
			mustWrite(t, filepath.Join(home, ".ssh", "id_rsa"), "E2E-T5-PRIVATE-TEMP-KEY\n")
			envOf := func(url string) []string {
				return cleanEnv(t, append(append([]string{"HOME=" + home, "TMPDIR=" + tmp,
					"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
					"OPENAI_API_KEY=sk-e2e-t5-private-temp", "OPENAI_BASE_URL=" + url}, gitEnv...), mode.env...)...)
			}

			// Session B keeps a file in its private directory and waits,
			// alive, until A is done; then it says what the file holds.
			srvB, resultsB := commandsServer(t, `echo b-own > "$TMPDIR/cache.txt" && echo "$TMPDIR" > b-tmp.new && mv b-tmp.new b-tmp; `+
				`for i in $(seq 1200); do [ -e a-done ] && break; sleep 0.05; done; echo "B-CACHE=$(cat "$TMPDIR/cache.txt")"`)
			cmdB := exec.Command(ralphBin, "-y", "set up B")
			cmdB.Dir, cmdB.Env = projB, envOf(srvB.URL)
			var outB, errB bytes.Buffer
			cmdB.Stdout, cmdB.Stderr = &outB, &errB
			if err := cmdB.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if cmdB.ProcessState == nil {
					cmdB.Process.Kill()
					cmdB.Wait()
				}
			}()
			waitFor(t, "session B's command", 60*time.Second, func() bool {
				_, err := os.Stat(filepath.Join(projB, "b-tmp"))
				return err == nil
			})
			privB := strings.TrimSpace(readFileT(t, filepath.Join(projB, "b-tmp")))
			if filepath.Dir(privB) != tmp || !strings.HasPrefix(filepath.Base(privB), "ralph-tmp-") {
				t.Fatalf("session B's commands did not get a private temporary directory in %s: %q", tmp, privB)
			}

			// Session A's command writes into every other ralph-tmp-… it
			// finds, as an attacker would, and into its own.
			srvA, resultsA := commandsServer(t, `for d in `+quoteShell(tmp)+`/ralph-tmp-*; do [ "$d" = "$TMPDIR" ] && continue; `+
				`echo pwned > "$d/cache.txt" && echo "WROTE $d"; mkdir "$d/planted" && echo "MADE $d"; done; `+
				`echo a-own > "$TMPDIR/own.txt" && echo "A-OWN=$TMPDIR"`)
			rA := ralph(t, projA, envOf(srvA.URL), nil, "-y", "set up A")
			if err := os.WriteFile(filepath.Join(projB, "a-done"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			errWait := cmdB.Wait()
			resA, resB := resultsA(), resultsB()
			t.Logf("A: exit %d; the model saw:\n%s\nB: %v; the model saw:\n%s", rA.code, resA, errWait, resB)
			if rA.code != 0 || errWait != nil {
				t.Fatalf("a session failed: A exit %d (%s), B %v (%s)", rA.code, rA.stderr, errWait, errB.String())
			}
			if !strings.Contains(resA, "A-OWN="+tmp+"/ralph-tmp-") {
				t.Errorf("A's command could not write its own private temporary directory")
			}
			if strings.Contains(resA, "WROTE "+privB) || strings.Contains(resA, "MADE "+privB) {
				t.Errorf("A's command wrote into session B's private temporary directory %s", privB)
			}
			if !strings.Contains(resB, "B-CACHE=b-own") {
				t.Errorf("B's file in its private directory is not B's any more:\n%s", resB)
			}
			for where, s := range map[string]string{"A's model": resA, "B's model": resB} {
				if strings.Contains(s, "E2E-T5-PRIVATE-TEMP-KEY") {
					t.Errorf("the key reached %s", where)
				}
			}
		})
	}
}
