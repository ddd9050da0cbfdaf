//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// TestLandlockAloneWhenNamespacesAreRefused is the sandbox on a system
// that allows no user namespaces (Ubuntu 24.04's default): commands
// still run, writes outside the project are still refused, the protected
// paths a command changes are put back and reported, and without the
// network TCP is refused. ralph says once what is weaker.
func TestLandlockAloneWhenNamespacesAreRefused(t *testing.T) {
	t.Setenv(NoUserNamespacesEnv, "1")
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, ".git", "hooks", "post-commit"), "#!/bin/sh\nexit 0\n")
	config := readFileT(t, filepath.Join(f.root, ".git", "config"))
	p := f.policy(WorkspaceWrite, false)
	var notes atomic.Int32
	p.Notify = func(s string) {
		if !strings.Contains(s, "Landlock alone") {
			t.Errorf("note: %s", s)
		}
		notes.Add(1)
	}

	out, ok, _ := run(t, p, "echo inside > inside.txt && echo x > "+f.outside+"/a.txt")
	if ok {
		t.Fatalf("a write outside was allowed: %s", out)
	}
	fileIs(t, filepath.Join(f.root, "inside.txt"), "inside\n")
	fileIs(t, filepath.Join(f.outside, "a.txt"), "")
	if pid := helperPid(t, p); pid > 0 {
		mine, _ := os.Readlink("/proc/self/ns/user")
		// The helper is not dumpable: as an unprivileged user its
		// namespaces cannot be read, and the other checks must do.
		theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", pid))
		if err == nil && mine != theirs {
			t.Fatalf("the helper has a user namespace of its own (%s, ours %s): the switch did not hold", theirs, mine)
		}
	}

	_, _, o := run(t, p, strings.Join([]string{
		"printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit",
		"rm .git/hooks/post-commit",
		"printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
		"echo evil > .git/commondir",
		"echo 'allowed_commands = [\"rm\"]' > .ralph/config.toml",
	}, "; "))
	for _, want := range []string{".git/hooks/pre-commit", ".git/hooks/post-commit", ".git/config", ".git/commondir", ".ralph/config.toml"} {
		if !strings.Contains(strings.Join(append(o.Restored, o.Removed...), " "), want) {
			t.Errorf("%s not reported as put back: %v %v", want, o.Restored, o.Removed)
		}
	}
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "pre-commit"), "")
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "post-commit"), "#!/bin/sh\nexit 0\n")
	fileIs(t, filepath.Join(f.root, ".git", "config"), config)
	fileIs(t, filepath.Join(f.root, ".git", "commondir"), "")
	fileIs(t, filepath.Join(f.root, ".ralph", "config.toml"), "model = \"m\"\n")

	// .git moved aside and another made comes back as it was.
	ino := inode(filepath.Join(f.root, ".git"))
	run(t, p, "mv .git .git-old && git init -q && printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit")
	if inode(filepath.Join(f.root, ".git")) != ino {
		t.Error(".git moved aside was not moved back")
	}
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "pre-commit"), "")

	// No network: TCP refused by Landlock.
	ln, accepted := tcpListener(t)
	if out, ok, _ := run(t, p, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ln.Addr().(*net.TCPAddr).Port)); ok || accepted.Load() != 0 {
		t.Errorf("TCP got through without the network: %s", out)
	}
	if n := notes.Load(); n != 1 {
		t.Errorf("ralph said what is weaker %d times, want once", n)
	}
}

// TestLandlockAloneKeepsRalphsOwnWrites: ralph saves an "always" answer
// to .ralph/config.toml while another command runs; the restore after
// that command must keep ralph's write, and still undo the command's.
func TestLandlockAloneKeepsRalphsOwnWrites(t *testing.T) {
	t.Setenv(NoUserNamespacesEnv, "1")
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	cfg := filepath.Join(f.root, ".ralph", "config.toml")
	helperPid(t, p) // the runner is in the Landlock-only mode from here
	proc, pr, err := start(t, p, "sleep 0.3; echo evil > .git/hooks/pre-commit")
	if err != nil {
		t.Fatal(err)
	}
	want := "model = \"m\"\nallowed_commands = [\"make\"]\n"
	if err := memory.WriteFileAtomic(afero.NewOsFs(), cfg, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, o := finish(t, proc, pr)
	fileIs(t, cfg, want)
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "pre-commit"), "")
	for _, r := range o.Restored {
		if strings.Contains(r, "config.toml") {
			t.Errorf("ralph's own write was reported as put back: %v", o.Restored)
		}
	}
}

// TestLandlockAloneNeverDeletesAMovedBackGit: a command that moves .git
// into a subdirectory has it moved back whole; one that takes it away and
// a later one that brings a copy back (new inodes, so not "the one
// recorded") lose nothing of the person's: the person's hooks and
// configuration stay, and what the command added is set aside, not
// deleted (issue 42: the restore deleted the hooks and config of a .git
// moved back).
func TestLandlockAloneNeverDeletesAMovedBackGit(t *testing.T) {
	t.Setenv(NoUserNamespacesEnv, "1")
	f := newFixture(t)
	hook := filepath.Join(f.root, ".git", "hooks", "post-commit")
	mustWrite(t, hook, "#!/bin/sh\necho mine\n")
	config := readFileT(t, filepath.Join(f.root, ".git", "config"))
	p := f.policy(WorkspaceWrite, false)
	ino := inode(filepath.Join(f.root, ".git"))

	run(t, p, "mkdir -p sub/deeper && mv .git sub/deeper/.git")
	if inode(filepath.Join(f.root, ".git")) != ino {
		t.Fatal(".git moved into a subdirectory was not moved back")
	}
	fileIs(t, hook, "#!/bin/sh\necho mine\n")

	run(t, p, "cp -a .git "+f.tmp+"/saved && rm -rf .git")
	run(t, p, "cp -a "+f.tmp+"/saved .git && printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit")
	fileIs(t, hook, "#!/bin/sh\necho mine\n")
	fileIs(t, filepath.Join(f.root, ".git", "config"), config)
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the command's hook is still where git runs it")
	}
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks", "pre-commit.ralph-set-aside")); err != nil {
		t.Errorf("the command's hook was not set aside: %v", err)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
