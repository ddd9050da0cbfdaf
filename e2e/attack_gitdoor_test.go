//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 66, causes 2 and 3: ralph reads git's files as the person, and a
// command decided which files those were.
//
// Cause 2: commands may write .git/index (`git add` does). A command
// linked it to the person's key, and the next session's seed of its own
// index opened the link as the person and copied the key into
// .ralph/sessions/<id>/git-index, which commands read. Now git's admin
// files are read through memory/rootfs's strict door, rooted at the git
// dir (no link in any component, regular files only, opened without
// blocking), and a link or FIFO at .git/index is renamed aside and told.
//
// Cause 3: a command wrote sub/.git = "gitdir: ~/victim/.git". The
// sandbox's nested guard took ~/victim/.git for a repository the
// command made and marked it the model's, and the person's later
// `ralph run --commit` in ~/victim went without that repository's own
// pre-commit hook (their secret scanner). Now a .git leading outside the
// project is set aside and told, and no repository outside the project
// is ever marked.

// gitdoorModes are the sandboxes an attack runs in: the default one and
// the Landlock-only fallback.
var gitdoorModes = []struct {
	name  string
	extra []string
}{{"default", nil}, {"fallback", []string{"RALPH_SANDBOX_NO_USERNS=1"}}}

// keyMarker is the text of the person's planted fake key.
const keyMarker = "MARKER-GITDOOR-66-PRIVATE-KEY"

// TestGitIndexLinkCopiesNoKeyIntoTheSession: a command links .git/index
// to ~/.ssh/id_rsa; the person's next session seeds its index and a
// command of it reads .ralph/sessions/*/git-index. The key appears in no
// session's index and in no request to the model; the key is unchanged,
// and the link is kept aside, not followed.
func TestGitIndexLinkCopiesNoKeyIntoTheSession(t *testing.T) {
	t.Parallel()
	for _, m := range gitdoorModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			key := filepath.Join(home, ".ssh", "id_rsa")
			if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
				t.Fatal(err)
			}
			keyText := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + keyMarker + "\n-----END OPENSSH PRIVATE KEY-----\n"
			if err := os.WriteFile(key, []byte(keyText), 0o600); err != nil {
				t.Fatal(err)
			}
			plant, results := commandsServer(t, "rm -f .git/index && ln -s "+key+" .git/index && ls -l .git/index && echo planted")
			env := attackEnv(t, home, plant.URL, m.extra)
			first := ralph(t, proj, env, nil, "-y", "set up the index")
			if first.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
			}
			if !strings.Contains(results(), "index -> "+key) {
				t.Fatalf("the command could not plant the link, so the test proves nothing:\n%s", results())
			}
			// The next session, whose checkpoint seeds its own index from
			// the person's; its command shows the model what it holds.
			read, readResults := commandsServer(t, "echo x > f1 && cat .ralph/sessions/*/git-index; echo read-done")
			env = attackEnv(t, home, read.URL, m.extra)
			r := ralph(t, proj, env, nil, "-y", "set up more")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(readResults(), "read-done") {
				t.Fatalf("the reading command did not run:\n%s", readResults())
			}
			indexes, _ := filepath.Glob(filepath.Join(proj, ".ralph", "sessions", "*", "git-index*"))
			for _, idx := range indexes {
				if b, _ := os.ReadFile(idx); strings.Contains(string(b), keyMarker) {
					t.Errorf("%s holds the person's key", idx)
				}
			}
			for _, q := range append(plant.Requests(), read.Requests()...) {
				if strings.Contains(string(q.Body), keyMarker) {
					t.Fatalf("the person's key reached the model's endpoint (request %d)", q.Index)
				}
			}
			if b, _ := os.ReadFile(key); string(b) != keyText {
				t.Errorf("the person's key changed: %q", b)
			}
			if fi, err := os.Lstat(filepath.Join(proj, ".git", "index.ralph-untrusted")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the planted link was not kept aside: %v", err)
			}
			// The turn's own checkpoint sets it aside, or the next
			// session's seed does: the person is told once.
			if n := strings.Count(first.stdout+first.stderr+r.stdout+r.stderr, "renamed aside"); n != 1 {
				t.Errorf("the person was told %d times that the index was set aside, want once\n%s\n%s\n%s", n, first.stderr, r.stdout, r.stderr)
			}
		})
	}
}

// TestGitIndexFIFOHangsNothing: a command puts a FIFO (nobody writes
// it) at .git/index; the person's next session neither hangs on it nor
// fails.
func TestGitIndexFIFOHangsNothing(t *testing.T) {
	t.Parallel()
	for _, m := range gitdoorModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			plant, results := commandsServer(t, "rm -f .git/index && mkfifo .git/index && ls -l .git/index && echo planted")
			env := attackEnv(t, home, plant.URL, m.extra)
			if r := ralph(t, proj, env, nil, "-y", "set up the index"); r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			fi, err := os.Lstat(filepath.Join(proj, ".git", "index"))
			if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				// The first session's checkpoint already set it aside:
				// plant it again from outside, as the person's state.
				_ = os.Remove(filepath.Join(proj, ".git", "index"))
				if err := syscall.Mkfifo(filepath.Join(proj, ".git", "index"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(results(), "planted") {
				t.Fatalf("the command could not plant the FIFO:\n%s", results())
			}
			more, _ := commandsServer(t, "echo x > f1")
			env = attackEnv(t, home, more.URL, m.extra)
			start := time.Now()
			r := ralph(t, proj, env, nil, "-y", "set up more")
			if r.code != 0 {
				t.Fatalf("exit %d after %s\n%s\n%s", r.code, time.Since(start), r.stdout, r.stderr)
			}
			if d := time.Since(start); d > 60*time.Second {
				t.Fatalf("ralph took %s with a FIFO at .git/index", d)
			}
		})
	}
}

// TestOutsideRepositoryKeepsItsHooks is the scenario: a command
// writes sub/.git = "gitdir: ~/victim/.git", where ~/victim is another
// repository of the person's whose pre-commit hook (their secret
// scanner) records that it ran. The person later runs `ralph -y run
// --commit` in ~/victim: ~/victim is not marked as the model's (no
// model-*.json names it) and its hook runs on ralph's commit.
func TestOutsideRepositoryKeepsItsHooks(t *testing.T) {
	t.Parallel()
	for _, m := range gitdoorModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			victim := filepath.Join(home, "victim")
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			// The hook runs in the sandbox (ralph runs the person's hooks
			// there), so it records its run in the project it commits.
			shIn(t, victim, "git init -q && echo v > v && git add v && git commit -qm v && "+
				`printf '#!/bin/sh\necho ran > pre-commit-ran\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`)
			srv, results := commandsServer(t, "mkdir -p sub && printf 'gitdir: "+filepath.Join(victim, ".git")+"\\n' > sub/.git && cat sub/.git && echo planted")
			xdg := "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")
			env := attackEnv(t, home, srv.URL, append([]string{xdg}, m.extra...))
			r := ralph(t, proj, env, nil, "-y", "set up the repository")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(results(), "planted") {
				t.Fatalf("the command could not plant sub/.git, so the test proves nothing:\n%s", results())
			}
			if !strings.Contains(results(), "outside the project") {
				t.Errorf("the model was not told sub/.git was set aside:\n%s", results())
			}
			marks, _ := filepath.Glob(filepath.Join(home, ".config", "ralph", "git-trust", "model-*.json"))
			for _, mk := range marks {
				if b, _ := os.ReadFile(mk); strings.Contains(string(b), victim) {
					t.Errorf("the person's repository %s was marked as the model's: %s", victim, b)
				}
			}
			// The person's own run in ~/victim, committing its task.
			writeTasks(t, victim, "write f1.txt one")
			tasks := fileTaskModel(t, nil)
			env = attackEnv(t, home, tasks.URL, append([]string{xdg}, personGit...))
			r = ralph(t, victim, env, nil, "-y", "run", "--commit")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if log := shIn(t, victim, "git log --format=%s"); !strings.Contains(log, "write f1.txt one") {
				t.Fatalf("the task was not committed:\n%s\n%s", log, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(victim, "pre-commit-ran")); err != nil {
				t.Errorf("ralph's commit in the person's repository skipped its pre-commit hook\n%s\n%s", r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "ran without the hooks") {
				t.Errorf("ralph says it went without the person's hooks\n%s\n%s", r.stdout, r.stderr)
			}
		})
	}
}
