package e2e

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 88, ralph's own checkpoints: the baseline checkpoint took the
// untracked .env a Read(./.env) rule names into git objects under
// refs/ralph/<session>/baseline, and a command's `git show
// refs/ralph/…:.env | base64` read it past the sandbox's cover over the
// file (the redaction masks a value only as written). Now no checkpoint
// takes in a file the session's door refuses (memory/git/withhold.go).
// The test failed on dbacc0bb; its payload is whether the secret, plain,
// in base64 or in rot13, reached the stand-in model's request log.

const a88CkptEnv = "E2E-A88C-checkpointed-dotenv-secret"

// a88Rot13 is s in rot13, which no redaction knows.
func a88Rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

// a88ReadRefs is the command that looks for the secret in every ref of
// ralph's and in every blob of the repository, printing what it finds in
// forms no redaction masks, and how many refs it saw.
const a88ReadRefs = `for r in $(git for-each-ref --format='%(refname)' refs/ralph); do
  git show "$r:.env" 2>/dev/null | base64 -w0; echo
  git show "$r:.env" 2>/dev/null | tr A-Za-z N-ZA-Mn-za-m
  git show "$r:secrets/vault.txt" 2>/dev/null | base64 -w0; echo
done
git cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' | while read o ty; do
  [ "$ty" = blob ] && git cat-file -p "$o" | grep -a E2E-A88C | tr A-Za-z N-ZA-Mn-za-m
done
echo "refs=$(git for-each-ref refs/ralph | wc -l)"; echo ran`

// TestAttack88CheckpointsKeepNoDeniedFile: the person denies reading
// ./.env and ./secrets/**, both untracked. A first session's model
// changes an ordinary file (a turn's checkpoint after the baseline); a
// second session's model shows .env from every ref under refs/ralph and
// searches every blob for the secret. Neither the secret nor its base64
// or rot13 reaches the endpoint, in either sandbox, while the
// checkpoints exist and hold the ordinary change.
func TestAttack88CheckpointsKeepNoDeniedFile(t *testing.T) {
	t.Parallel()
	content := "TOKEN=" + a88CkptEnv + "\n"
	forms := []string{a88CkptEnv, base64.StdEncoding.EncodeToString([]byte(content)), a88Rot13(a88CkptEnv),
		base64.StdEncoding.EncodeToString([]byte(a88CkptEnv + "-vault\n"))}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			mustWrite(t, filepath.Join(home, ".claude", "settings.json"),
				`{"permissions":{"deny":["Read(./.env)","Read(./secrets/**)"]}}`)
			mustWrite(t, filepath.Join(proj, ".env"), content)
			mustWrite(t, filepath.Join(proj, "secrets", "vault.txt"), a88CkptEnv+"-vault\n")
			mustWrite(t, filepath.Join(proj, "notes.txt"), "an ordinary file\n")

			first, log := a59Server(t, a59Cmd("echo more >> notes.txt; echo ran"))
			r := ralph(t, proj, attackEnv(t, home, first.URL, mode.env), nil, "-y", "set up")
			if _, results := log(); r.code != 0 || !strings.Contains(results, "ran") {
				t.Fatalf("the first session's command did not run: exit %d\n%s\n%s", r.code, results, r.stderr)
			}

			second, log := a59Server(t, a59Cmd(a88ReadRefs))
			r = ralph(t, proj, attackEnv(t, home, second.URL, mode.env), nil, "-y", "set up")
			_, results := log()
			if r.code != 0 || !strings.Contains(results, "ran") {
				t.Fatalf("the second session's command did not run: exit %d\n%s\n%s", r.code, results, r.stderr)
			}
			// The checkpoints are there to read: a baseline and a turn of
			// the first session, the second's baseline.
			if strings.Contains(results, "refs=0") || !strings.Contains(results, "refs=") {
				t.Fatalf("the command saw no checkpoint refs:\n%s", results)
			}
			saw := endpointSaw(first) + endpointSaw(second)
			for _, s := range forms {
				if strings.Contains(saw, s) {
					t.Errorf("BROKEN: the endpoint received %q through ralph's checkpoints; the tools' results:\n%s", s, results)
				}
			}
			// The ordinary change is still checkpointed.
			if out := shIn(t, proj, `for r in $(git for-each-ref --format='%(refname)' refs/ralph); do git show "$r:notes.txt" 2>/dev/null; done`); !strings.Contains(out, "more") {
				t.Errorf("no checkpoint holds the first session's change to notes.txt:\n%s", out)
			}
		})
	}
}
