//go:build unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fixture is a project root with a git repository and ralph's state, a
// writable temporary directory and a directory outside both.
type fixture struct {
	root, tmp, outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{root: realDir(t), tmp: realDir(t), outside: realDir(t)}
	if out, err := exec.Command("git", "init", "-q", f.root).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	mustWrite(t, filepath.Join(f.root, ".ralph", "session.lock"), "lock\n")
	mustWrite(t, filepath.Join(f.root, ".ralph", "config.toml"), "model = \"m\"\n")
	mustWrite(t, filepath.Join(f.outside, "secret.txt"), "readable\n")
	return f
}

func (f fixture) policy(mode Mode, network bool) *Policy {
	return &Policy{Mode: mode, Root: f.root, Writable: []string{f.tmp}, Network: network}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runners keeps one Runner per policy of a test, as a Toolset does.
var runners sync.Map // *Policy → *Runner

func runnerFor(t *testing.T, p *Policy) *Runner {
	t.Helper()
	r, loaded := runners.LoadOrStore(p, NewRunner(p))
	if !loaded {
		t.Cleanup(func() { r.(*Runner).Close(); runners.Delete(p) })
	}
	return r.(*Runner)
}

// start starts script with bash under p in the root; the output goes to
// the returned pipe.
func start(t *testing.T, p *Policy, script string, env ...string) (*Process, *os.File, error) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	proc, err := runnerFor(t, p).Start(context.Background(), Command{
		Path: "/bin/bash", Args: []string{"bash", "-c", script},
		Dir: p.Root, Env: append(os.Environ(), env...), Stdout: pw, Stderr: pw,
	})
	if err != nil {
		pr.Close()
		return nil, nil, err
	}
	return proc, pr, nil
}

// finish reads the command's output to the end, kills what is left of its
// group as ralph does, and reaps it.
func finish(t *testing.T, proc *Process, pr *os.File) (string, syscall.WaitStatus, Outcome) {
	t.Helper()
	out, _ := io.ReadAll(pr)
	pr.Close()
	<-proc.Exited()
	syscall.Kill(-proc.Pid, syscall.SIGKILL)
	ws, o := proc.Wait()
	return string(out), ws, o
}

// run runs script with bash under p in the root and returns its output,
// whether it exited 0, and the command's outcome.
func run(t *testing.T, p *Policy, script string, env ...string) (string, bool, Outcome) {
	t.Helper()
	proc, pr, err := start(t, p, script, env...)
	if err != nil {
		t.Fatalf("the sandbox did not run %q: %v", script, err)
	}
	out, ws, o := finish(t, proc, pr)
	if o.Err != nil {
		t.Fatalf("the sandbox lost %q: %v", script, o.Err)
	}
	return out, ws.Exited() && ws.ExitStatus() == 0, o
}

func fileIs(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if want == "" {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (%q, %v); the sandbox let it be written", path, b, err)
		}
		return
	}
	if err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", path, b, err, want)
	}
}

func TestWorkspaceWriteRefusesWritesOutsideAndToProtectedPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	config := readFile(t, filepath.Join(f.root, ".git", "config"))
	home, _ := os.UserHomeDir()
	homeProbe := filepath.Join(home, fmt.Sprintf("ralph-sandbox-probe-%d", os.Getpid()))
	refused := map[string]string{
		"echo x > " + f.outside + "/new.txt":                               filepath.Join(f.outside, "new.txt"),
		"echo x > ../" + filepath.Base(f.outside) + "/dotdot.txt":          filepath.Join(f.outside, "dotdot.txt"),
		"ln -s " + f.outside + " out && echo x > out/via-link.txt":         filepath.Join(f.outside, "via-link.txt"),
		"echo x > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit": filepath.Join(f.root, ".git/hooks/pre-commit"),
		"echo x > .ralph/new": filepath.Join(f.root, ".ralph/new"),
		"mv .git .git-aside && mkdir -p .git/hooks && echo x > .git/hooks/post-checkout": filepath.Join(f.root, ".git/hooks/post-checkout"),
	}
	if home != "" && !within(f.tmp, home) && !within(f.root, home) {
		refused["echo x > "+homeProbe] = homeProbe
		t.Cleanup(func() { os.Remove(homeProbe) })
	}
	for script, path := range refused {
		out, ok, _ := run(t, p, script)
		if ok {
			t.Errorf("%q succeeded: %s", script, out)
		}
		fileIs(t, path, "")
		if note := p.Explain(out); note == "" {
			t.Errorf("%q: no note for the model in %q", script, out)
		}
	}
	for _, script := range []string{
		"echo evil >> .git/config",
		"git config core.fsmonitor 'touch /tmp/pwned'",
		"echo x > .ralph/session.lock",
		"rm -rf .ralph",
		"mv .ralph .ralph-aside",
		"rm -rf .git/hooks",
	} {
		if out, ok, _ := run(t, p, script); ok {
			t.Errorf("%q succeeded: %s", script, out)
		}
	}
	fileIs(t, filepath.Join(f.root, ".git", "config"), config)
	fileIs(t, filepath.Join(f.root, ".ralph", "session.lock"), "lock\n")
	fileIs(t, filepath.Join(f.root, ".ralph", "config.toml"), "model = \"m\"\n")
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks")); err != nil {
		t.Errorf(".git/hooks: %v", err)
	}

	out, ok, _ := run(t, p, "echo in > inside.txt && mkdir -p a/b && echo deep > a/b/c.txt && mv a/b/c.txt moved.txt && echo t > "+f.tmp+"/t.txt && cat "+f.outside+"/secret.txt .git/config >/dev/null && cat /etc/passwd >/dev/null && echo null > /dev/null && echo ok")
	if !ok || out != "ok\n" {
		t.Fatalf("allowed writes and reads failed: %s", out)
	}
	fileIs(t, filepath.Join(f.root, "inside.txt"), "in\n")
	fileIs(t, filepath.Join(f.root, "moved.txt"), "deep\n")
	fileIs(t, filepath.Join(f.tmp, "t.txt"), "t\n")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(ReadOnly, true)
	for script, path := range map[string]string{
		"echo x > inside.txt":                    filepath.Join(f.root, "inside.txt"),
		"mkdir newdir":                           filepath.Join(f.root, "newdir"),
		"echo x > " + f.tmp + "/t.txt":           filepath.Join(f.tmp, "t.txt"),
		"echo x > " + os.TempDir() + "/ralph-ro": filepath.Join(os.TempDir(), "ralph-ro"),
		"echo x > " + f.outside + "/o.txt":       filepath.Join(f.outside, "o.txt"),
	} {
		out, ok, _ := run(t, p, script)
		if ok {
			t.Errorf("%q succeeded: %s", script, out)
		}
		fileIs(t, path, "")
		if !strings.Contains(p.Explain(out), "the sandbox (read-only) blocked this: no writes are allowed") {
			t.Errorf("%q: note %q for %q", script, p.Explain(out), out)
		}
	}
	if out, ok, _ := run(t, p, "rm -f .ralph/session.lock"); ok {
		t.Errorf("rm succeeded: %s", out)
	}
	fileIs(t, filepath.Join(f.root, ".ralph", "session.lock"), "lock\n")
	if out, ok, _ := run(t, p, "cat "+f.outside+"/secret.txt && ls .git >/dev/null && echo x > /dev/null"); !ok || out != "readable\n" {
		t.Fatalf("reads failed under read-only: %s", out)
	}
}

func TestGitCommitWorksInWorkspaceWrite(t *testing.T) {
	t.Parallel()
	root, tmp := realDir(t), realDir(t)
	p := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{tmp}, Network: true}
	env := []string{"HOME=" + tmp, "XDG_CONFIG_HOME=" + tmp, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	// The first command creates the repository; the second runs with .git
	// pinned and its hooks and config read-only, as every later one does.
	for _, script := range []string{
		"git init -q && echo one > a.txt && git add . && git commit -qm first",
		"echo two >> a.txt && mkdir -p sub && echo s > sub/s.txt && git add -A && git commit -qm second && git tag v1 && git checkout -qb topic && git log --oneline | wc -l",
	} {
		out, ok, _ := run(t, p, script, env...)
		if !ok {
			t.Fatalf("%q failed: %s", script, out)
		}
		if strings.Contains(script, "wc -l") && strings.TrimSpace(out) != "2" {
			t.Fatalf("commits: %q", out)
		}
	}
}

func TestNoNetwork(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port)
	for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
		if out, ok, _ := run(t, f.policy(mode, true), script); !ok || out != "hello\n" {
			t.Fatalf("%s with the network: %q", mode, out)
		}
		p := f.policy(mode, false)
		out, ok, _ := run(t, p, script)
		if ok {
			t.Fatalf("%s --no-network reached the test's listener: %q", mode, out)
		}
		if !strings.Contains(p.Explain(out), "there is no network (--no-network)") {
			t.Errorf("%s: note %q for %q", mode, p.Explain(out), out)
		}
	}
	// The private network still has a loopback of its own.
	py := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); c=socket.create_connection(s.getsockname()); print("own loopback ok")'`
	if _, err := exec.LookPath("python3"); err == nil {
		if out, ok, _ := run(t, f.policy(WorkspaceWrite, false), py); !ok || out != "own loopback ok\n" {
			t.Errorf("own loopback: %q", out)
		}
	}
}

func TestGuardedPathsCreatedByACommandAreRemoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.policy(WorkspaceWrite, true)
	// git reads the configuration of the directory commondir names: a
	// file that does not exist yet cannot be covered by a mount, so it is
	// removed after the command instead.
	_, _, o := run(t, p, "echo "+f.tmp+" > .git/commondir; echo '[core]' > .git/config.worktree")
	if strings.Join(o.Removed, " ") != ".git/commondir .git/config.worktree" {
		t.Fatalf("removed %q", o.Removed)
	}
	fileIs(t, filepath.Join(f.root, ".git", "commondir"), "")
	fileIs(t, filepath.Join(f.root, ".git", "config.worktree"), "")
}

func TestSymlinkedGitIsRefused(t *testing.T) {
	t.Parallel()
	root, elsewhere := realDir(t), realDir(t)
	if err := os.Symlink(elsewhere, filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Root: root, Network: true}
	_, _, err := start(t, p, "true")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), ".git is a symbolic link") {
		t.Fatalf("Start = %v", err)
	}
}

func TestHelperThatDoesNotDispatchIsReported(t *testing.T) {
	t.Parallel()
	p := &Policy{Mode: ReadOnly, Root: realDir(t), Network: true, Helper: "/bin/true"}
	proc, _, err := start(t, p, "echo ran > "+filepath.Join(p.Root, "ran"))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "helper did not start") || proc != nil {
		t.Fatalf("Start = %v", err)
	}
	fileIs(t, filepath.Join(p.Root, "ran"), "")
}

func TestParseModeAndLooser(t *testing.T) {
	for _, s := range []string{"read-only", "workspace-write", "danger-full-access"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if m, err := ParseMode(""); err != nil || m != WorkspaceWrite {
		t.Errorf("default mode = %q, %v", m, err)
	}
	if _, err := ParseMode("workspace"); err == nil || !strings.Contains(err.Error(), "use read-only, workspace-write or danger-full-access") {
		t.Errorf("bad mode: %v", err)
	}
	if !looser(FullAccess, WorkspaceWrite) || looser(ReadOnly, WorkspaceWrite) || !looser("bogus", FullAccess) {
		t.Error("looser orders the modes wrongly")
	}
}

func TestSymlinkInsideGitMakesAllOfGitReadOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hooks := filepath.Join(f.root, ".git", "hooks")
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.root, "githooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../githooks", hooks); err != nil {
		t.Fatal(err)
	}
	p := f.policy(WorkspaceWrite, true)
	// The link itself could be swapped for a directory of hooks, so the
	// whole of .git is kept read-only.
	for _, script := range []string{"rm .git/hooks && mkdir .git/hooks", "echo x > .git/new"} {
		if out, ok, _ := run(t, p, script); ok {
			t.Errorf("%q succeeded: %s", script, out)
		}
	}
	if fi, err := os.Lstat(hooks); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf(".git/hooks is no longer the link: %v", err)
	}
	if out, ok, _ := run(t, p, "git status --short && echo x > inside.txt"); !ok {
		t.Fatalf("reading the repository and writing the project failed: %s", out)
	}
}
