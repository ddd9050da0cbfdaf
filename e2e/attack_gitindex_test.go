package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Finding 3 (and 1c) of the attack on 1eb6b20: ralph's checkpoint git
// hands git the session's own index, .ralph/sessions/<id>/git-index,
// through GIT_INDEX_FILE, and git's lock file code follows a symlink at
// that name. A command that linked git-index to another repository's
// .git/index, or to the person's own, had ralph's next checkpoints stage
// the turn's files there. Now the link is removed, never followed, the
// index seeded again, and the person told.

// plantedSessionID is the session a command plants under pkg/.ralph.
const plantedSessionID = "20261125T235959Z-aaaaaaaaaaaa"

// indexAttack lays out an attack: the project and home, the victim's
// index, where the command's link points (the person's own index through
// ownLink when own), and both indexes' bytes before.
func indexAttack(t *testing.T, own bool, ownLink string) (proj, home, victim, link string, victimBefore, ownBefore []byte) {
	t.Helper()
	proj, home = attackLayout(t)
	victim = gitIndexVictim(t, filepath.Dir(proj))
	link = victim
	if own {
		link = ownLink
	}
	return proj, home, victim, link, readBytes(t, victim), readBytes(t, filepath.Join(proj, ".git", "index"))
}

// gitIndexVictim makes a repository outside the project, with one commit
// and a staged file, and returns its .git/index.
func gitIndexVictim(t *testing.T, base string) string {
	t.Helper()
	victim := filepath.Join(base, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, victim, "git init -q && echo v > v && git add v && git commit -qm v && echo w > w && git add w")
	return filepath.Join(victim, ".git", "index")
}

// indexesAsBefore fails the test when the victim's index or the person's
// is not byte for byte what it was, or ralph's run r failed.
func indexesAsBefore(t *testing.T, victim string, before []byte, proj string, own []byte, r runResult) {
	t.Helper()
	if !bytes.Equal(readBytes(t, victim), before) {
		t.Errorf("the victim repository's index was rewritten through the link")
	}
	if !bytes.Equal(readBytes(t, filepath.Join(proj, ".git", "index")), own) {
		t.Errorf("the person's own index was rewritten through the link")
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckpointIndexFollowsNoLink: in the fallback a command links the
// running session's git-index to a victim repository's index outside the
// project (or to the person's own, ../../../.git/index); the turns after
// it write files. In the default sandbox .ralph/ is read-only, so the
// command plants a whole session with such a link in pkg/.ralph, and the
// person continues there (cd pkg && ralph -c). Both indexes stay byte for
// byte as they were.
func TestCheckpointIndexFollowsNoLink(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"victim", "own"} {
		t.Run("landlock-only/"+target, func(t *testing.T) {
			proj, home, victim, link, before, own := indexAttack(t, target == "own", "../../../.git/index")
			srv := inlineServer(t, toolScenario(t, "gitindex", [][]toolCall{
				{{"run_command", `{"command":"echo a > f1"}`}},
				{{"run_command", `{"command":"echo b > f2; for d in .ralph/sessions/*/; do rm -f $d/git-index; ln -s ` + link + ` $d/git-index; done; ls -l .ralph/sessions/*/git-index"}`}},
				{{"run_command", `{"command":"echo c > f3"}`}},
				{{"run_command", `{"command":"echo d > f4"}`}},
			}, "done"))
			env := attackEnv(t, home, srv.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
			r := ralph(t, proj, env, nil, "-y", "write four files")
			indexesAsBefore(t, victim, before, proj, own, r)
			if fi, err := os.Lstat(filepath.Join(sessionDir(t, proj), "git-index")); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the session's git-index is not ralph's own file again: %v %v", fi, err)
			}
			if n := strings.Count(r.stdout+r.stderr, "removed, not followed"); n != 1 {
				t.Fatalf("the person was told %d times, want once\n%s\n%s", n, r.stdout, r.stderr)
			}
		})
	}
	for _, target := range []string{"victim", "own"} {
		t.Run("default/"+target, func(t *testing.T) {
			proj, home, victim, link, before, own := indexAttack(t, target == "own", "../../../../.git/index")
			dir := "pkg/.ralph/sessions/" + plantedSessionID
			session := `{"version":1,"session_id":"` + plantedSessionID + `","status":"completed","mode":"oneshot","model":"fake-model",` +
				`"started_at":"2026-11-25T23:59:58Z","updated_at":"2026-11-25T23:59:59Z"}`
			plant, results := commandsServer(t, "mkdir -p "+dir+" && echo x > pkg/x && printf '%s' '"+session+"' > "+dir+"/session.json && : > "+dir+"/messages.jsonl && ln -s "+link+" "+dir+"/git-index && ls -l "+dir)
			env := attackEnv(t, home, plant.URL, nil)
			if r := ralph(t, proj, env, nil, "-y", "set up the session"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if !strings.Contains(results(), "git-index -> "+link) {
				t.Fatalf("the command could not plant the session, so the test proves nothing:\n%s", results())
			}
			more, _ := commandsServer(t, "echo c > f3", "echo d > f4")
			env = attackEnv(t, home, more.URL, nil)
			r := ralph(t, filepath.Join(proj, "pkg"), env, nil, "-y", "-c", "set up more")
			indexesAsBefore(t, victim, before, proj, own, r)
		})
	}
}
