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

// Issue 42, causes 4, 6 and 9: nothing ralph writes follows a link, and
// nothing a command writes names where ralph writes. Each attack runs in
// the default sandbox and in the Landlock-only fallback where it applies,
// with a home and a temporary directory of the test's own outside the
// project.

// attackLayout makes base/proj (a git repository with one commit) and
// base/home with a .bashrc of the person's, and returns them.
func attackLayout(t *testing.T) (proj, home string) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, home = filepath.Join(base, "proj"), filepath.Join(base, "home")
	for _, d := range []string{proj, home, filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# the person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitProject(t, proj)
	return proj, home
}

// attackEnv is ralph's environment for an attack against proj.
func attackEnv(t *testing.T, home, url string, extra []string) []string {
	env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"),
		"OPENAI_API_KEY=sk-e2e-links", "OPENAI_BASE_URL=" + url}, gitEnv...)
	return cleanEnv(t, append(env, extra...)...)
}

// wantBashrc fails the test when the person's ~/.bashrc is not as it was.
func wantBashrc(t *testing.T, home string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".bashrc"))
	if err != nil || string(b) != "# the person's\n" {
		t.Fatalf("~/.bashrc is not the person's any more: %q, %v", b, err)
	}
}

// TestUndoFollowsNoSymlinkedDirectory: the model writes d/.bashrc in one
// request and rewrites it in the next; in a third it replaces d with a
// symlink to the person's home. That request's checkpoint records the
// link (it used to fail on d/.bashrc, "beyond a symbolic link", and a
// plain ralph undo then took back the rewrite through the link: the
// model's content landed in ~/.bashrc). Now undo takes back the link,
// putting the directory back beside it, and a second undo the rewrite;
// home is untouched.
func TestUndoFollowsNoSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			var env []string
			for i, step := range []string{
				"mkdir d && echo 'echo model was here' > d/.bashrc",
				"echo changed > d/.bashrc",
				"mv d d.real && ln -s '" + home + "' d",
			} {
				srv, _ := commandsServer(t, step)
				env = attackEnv(t, home, srv.URL, mode.env)
				args := []string{"-y", "set up step"}
				if i > 0 {
					args = append([]string{"-c"}, args...)
				}
				if r := ralph(t, proj, env, nil, args...); r.code != 0 {
					t.Fatalf("step %d: exit %d\n%s", i+1, r.code, r.stderr)
				}
			}
			for i, want := range []string{"changed\n", "echo model was here\n"} {
				u := ralph(t, proj, env, nil, "undo")
				wantBashrc(t, home)
				if u.code != 0 {
					t.Fatalf("undo %d: exit %d\n%s\n%s", i+1, u.code, u.stdout, u.stderr)
				}
				if fi, err := os.Lstat(filepath.Join(proj, "d")); err != nil || !fi.IsDir() {
					t.Fatalf("undo %d: d is not the directory it was: %v %v", i+1, fi, err)
				}
				if b, _ := os.ReadFile(filepath.Join(proj, "d", ".bashrc")); string(b) != want {
					t.Fatalf("undo %d: d/.bashrc: %q, want %q", i+1, b, want)
				}
				if _, err := os.Lstat(filepath.Join(proj, "d.real")); !os.IsNotExist(err) {
					t.Fatalf("undo %d: d.real, made by the request taken back, is still there: %v", i+1, err)
				}
			}
		})
	}
}

// TestUndoOfAForgedRecordWritesNothingOutside: in the fallback a command
// may write .ralph/, and appends a checkpoint record of its own request
// naming ../home/.bashrc, which the commit it names lacks: undo removed
// the person's ~/.bashrc. Now undo refuses the record's path and says so.
func TestUndoOfAForgedRecordWritesNothingOutside(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	forge := `c=$(git rev-parse HEAD); for f in .ralph/sessions/*/checkpoints.jsonl; do ` +
		`printf '{"kind":"turn","time":"2026-01-01T00:00:00Z","turn":1,"request":1,"ref":"refs/ralph/x/turn-1","commit":"%s","parent":"%s","files":[{"path":"../home/.bashrc","added":1,"removed":0}]}\n' "$c" "$c" >> "$f"; done; echo x > touched.txt`
	srv, results := commandsServer(t, forge)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
	if r := ralph(t, proj, env, nil, "-y", "set up the record"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if log := readFileT(t, filepath.Join(sessionDir(t, proj), "checkpoints.jsonl")); !strings.Contains(log, "../home/.bashrc") {
		t.Fatalf("the command could not forge the record, so the test proves nothing:\n%s\n%s", log, results())
	}
	u := ralph(t, proj, env, nil, "undo")
	wantBashrc(t, home)
	if u.code == 0 || !strings.Contains(u.stderr, "../home/.bashrc") {
		t.Fatalf("undo of a forged record: exit %d, want it refused and named\n%s\n%s", u.code, u.stdout, u.stderr)
	}
}

// TestCheckpointRefsFollowNoLink: a command replaces .git/refs/ralph with
// a symlink to ~/.config; ralph's next checkpoint created
// ~/.config/<session>/turn-1 through it. Now the link is removed and the
// refs are written inside .git.
func TestCheckpointRefsFollowNoLink(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			cfg := filepath.Join(home, ".config")
			if err := os.MkdirAll(cfg, 0o755); err != nil {
				t.Fatal(err)
			}
			srv, results := commandsServer(t, "rm -rf .git/refs/ralph && ln -s '"+cfg+"' .git/refs/ralph && echo x > touched.txt && ls -l .git/refs")
			env := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, env, nil, "-y", "set up the link")
			if !strings.Contains(results(), "ralph -> "+cfg) {
				t.Fatalf("the command could not make the link, so the test proves nothing:\n%s", results())
			}
			var made []string
			filepath.WalkDir(cfg, func(p string, d os.DirEntry, err error) error {
				if err == nil && p != cfg && !strings.HasPrefix(p, filepath.Join(cfg, "ralph")) {
					made = append(made, p)
				}
				return nil
			})
			if len(made) > 0 {
				t.Fatalf("the checkpoint wrote through the link into the home directory: %v", made)
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			list := exec.Command("git", "-C", proj, "for-each-ref", "refs/ralph/")
			list.Env = cleanEnv(t)
			refs, err := list.Output()
			if err != nil || !strings.Contains(string(refs), "turn-1") {
				t.Fatalf("the turn's checkpoint ref is not in the repository: %s %v", refs, err)
			}
			if fi, err := os.Lstat(filepath.Join(proj, ".git", "refs", "ralph")); err != nil || !fi.IsDir() {
				t.Fatalf(".git/refs/ralph is not a directory: %v %v", fi, err)
			}
		})
	}
}

// listenScript replaces .ralph/control.sock with a listener of its own
// and keeps what it is sent in captured.txt.
const listenScript = `import os, socket
p = '.ralph/control.sock'
try:
    os.unlink(p)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(p)
s.listen(5)
s.settimeout(60)
open('ready', 'w').close()
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.settimeout(5)
    data = b''
    try:
        while not data.endswith(b'\n'):
            b = c.recv(4096)
            if not b:
                break
            data += b
    except OSError:
        pass
    with open('captured.txt', 'ab') as f:
        f.write(data)
    c.close()
`

// TestControlSocketOutOfCommandsReach: in the fallback a command may write
// .ralph/, and replaced the control socket with its own listener, which
// then received what the person said with ralph say. Now the socket lives
// where no command writes, and the person's words reach ralph only.
func TestControlSocketOutOfCommandsReach(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	if err := os.WriteFile(filepath.Join(proj, "listen.py"), []byte(listenScript), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, results := commandsServer(t, "(python3 listen.py &) ; for i in $(seq 300); do [ -e said ] && break; sleep 0.1; done; echo waited")
	env := attackEnv(t, home, srv.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})
	cmd := exec.Command(ralphBin, "-y", "set up the listener")
	cmd.Dir, cmd.Env = proj, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(proj, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the listener never started:\n%s\n%s", errb.String(), results())
		}
		time.Sleep(50 * time.Millisecond)
	}
	const secret = "my deploy password is hunter2"
	s := ralph(t, proj, env, nil, "say", secret)
	os.WriteFile(filepath.Join(proj, "said"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ralph: %v\n%s", err, errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "captured.txt")); strings.Contains(string(b), "hunter2") {
		t.Fatalf("the command's listener received what the person said: %q", b)
	}
	if s.code != 0 {
		t.Fatalf("ralph say: exit %d\n%s\n%s", s.code, s.stdout, s.stderr)
	}
}
