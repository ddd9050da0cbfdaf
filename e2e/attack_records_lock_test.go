//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 88, cause 6: `ralph --force` sent SIGTERM and SIGKILL to the pid
// written in .ralph/session.lock, a file commands can write in the
// fallback sandbox, so the model chose which of the person's processes
// died; and a hard link a command made to the lock file made every later
// ralph refuse to start. Now --force finds the holder through the lock
// itself (the kernel's record of the flock, the process holding the file
// open, a ralph's executable) and signals nothing else, and a lock file
// with a second name is made anew.

// TestAttackForceSignalsOnlyTheLocksHolder: while the person's ralph
// works, its model's command writes the pid of another of the person's
// processes into the lock file, in place; the person runs ralph --force to
// take the project over. The other process lives, and the ralph that
// really held the lock is the one stopped.
func TestAttackForceSignalsOnlyTheLocksHolder(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill() })
	died := make(chan struct{})
	go func() { _ = victim.Wait(); close(died) }()

	pid := strconv.Itoa(victim.Process.Pid)
	plant := `s=$(sed 's/"pid": *[0-9]*/"pid": ` + pid + `/' .ralph/session.lock) && printf '%s\n' "$s" > .ralph/session.lock && cat .ralph/session.lock && touch planted && sleep 300`
	srv, _ := commandsServer(t, plant)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
	holder := exec.Command(ralphBin, "-y", "set up the lock")
	holder.Dir, holder.Env = proj, env
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill() })
	exited := make(chan struct{})
	go func() { _ = holder.Wait(); close(exited) }()
	waitFor(t, "the command to write the lock file", 60*time.Second, func() bool { return exists(filepath.Join(proj, "planted")) })
	if lock := readFileT(t, filepath.Join(proj, ".ralph", "session.lock")); !strings.Contains(lock, `"pid": `+pid) {
		t.Fatalf("the command could not write the lock file, so the test proves nothing:\n%s", lock)
	}

	next, _ := commandsServer(t, "echo took over")
	r := ralph(t, proj, attackEnv(t, home, next.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"}), nil, "-y", "--force", "set up more")
	t.Logf("ralph --force: exit %d\n%s", r.code, r.stderr)
	select {
	case <-died:
		t.Fatalf("ralph --force killed pid %s, the process the lock file named, not its holder", pid)
	default:
	}
	if r.code != 0 || !strings.Contains(r.stderr, "stopped the ralph (pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("--force did not stop the ralph holding the lock (pid %d): exit %d\n%s", holder.Process.Pid, r.code, r.stderr)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the ralph that held the lock still runs")
	}
}

// TestAttackHardLinkToTheLockFile: a command hard-links the lock file;
// the person's next ralph starts, says in one line that it made the file
// anew, and writes nothing through the other name.
func TestAttackHardLinkToTheLockFile(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			srv, results := commandsServer(t, "ln .ralph/session.lock lock-alias && echo linked")
			env := attackEnv(t, home, srv.URL, mode.env)
			if r := ralph(t, proj, env, nil, "-y", "set up the link"); r.code != 0 {
				t.Fatalf("the linking session: exit %d\n%s", r.code, r.stderr)
			}
			alias := filepath.Join(proj, "lock-alias")
			if !strings.Contains(results(), "linked") {
				if mode.env != nil {
					t.Fatalf("the command could not link the lock file in the fallback, so the test proves nothing:\n%s", results())
				}
				// The default sandbox gives commands a read-only
				// .ralph/: the link is refused there already.
				t.Logf("the default sandbox refused the link:\n%s", results())
			}
			if fi, err := os.Stat(filepath.Join(proj, ".ralph", "session.lock")); err == nil && mode.env != nil {
				if n := fi.Sys().(*syscall.Stat_t).Nlink; n < 2 {
					t.Fatalf("the lock file has %d link(s) after the session, so the test proves nothing", n)
				}
			}
			before, _ := os.ReadFile(alias)
			next, _ := commandsServer(t, "echo next")
			r := ralph(t, proj, attackEnv(t, home, next.URL, mode.env), nil, "-y", "set up more")
			t.Logf("the next ralph: exit %d\n%s", r.code, r.stderr)
			if r.code != 0 {
				t.Fatalf("the next ralph did not start with a hard link to its lock file: exit %d\n%s", r.code, r.stderr)
			}
			if before == nil {
				return
			}
			if !strings.Contains(r.stderr, "had a second name (a hard link, which a command may have made); ralph made it anew") {
				t.Fatalf("ralph did not say it made its lock file anew:\n%s", r.stderr)
			}
			if after, _ := os.ReadFile(alias); string(after) != string(before) {
				t.Fatalf("ralph wrote its lock through the other name:\n%s", after)
			}
			if fi, err := os.Stat(filepath.Join(proj, ".ralph", "session.lock")); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Fatalf("the lock file is not ralph's alone: %v", err)
			}
		})
	}
}
