package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	t.Parallel()
	root, tmp := realDir(t), realDir(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ww := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{tmp}, Network: true}
	off := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{tmp}, Network: false}
	ro := &Policy{Mode: ReadOnly, Root: root, Network: true}
	full := &Policy{Mode: FullAccess, Root: root, Network: false}
	for _, tc := range []struct {
		p      *Policy
		output string
		want   string // "" means no note
	}{
		{ww, "touch: cannot touch '/etc/x': Permission denied", "writes outside the project"},
		{ww, "bash: line 1: /home/u/.bashrc: Permission denied", "writes outside the project"},
		{ww, "cp: cannot create regular file '../x': Permission denied", "writes outside the project"},
		{ww, "bash: link: Permission denied", "writes outside the project"}, // a link inside pointing out
		{ww, "PermissionError: [Errno 13] Permission denied: '/usr/lib/x'", "writes outside the project"},
		{ww, "error: could not lock config file .git/config: Read-only file system", "and to .git/hooks, .git/config and .ralph/"},
		{ww, "bash: .ralph/session.lock: Permission denied", "writes outside the project"},
		{ww, "mv: cannot move '.git' to 'x': Device or resource busy", "writes outside the project"},
		{ww, "error: could not write config file .git/config: Device or resource busy", "writes outside the project"},
		{ww, "touch: cannot touch 'src/x': Permission denied", ""},         // inside the project: not the sandbox
		{ww, "touch: cannot touch '" + tmp + "/x': Permission denied", ""}, // the temporary directory is writable
		{ww, "curl: (6) Could not resolve host: example.com", ""},          // the network is on
		{ww, "all good", ""},
		{off, "curl: (6) Could not resolve host: example.com", "there is no network (--no-network)"},
		{off, "bash: connect: Network is unreachable", "there is no network"},
		{off, "curl: (7) Failed to connect to 127.0.0.1 port 41873 after 0 ms: Couldn't connect to server", "there is no network"},
		{off, "touch: cannot touch '/etc/x': Permission denied\nbash: connect: Connection refused", "there is no network"},
		{ro, "Permission denied at -e line 1.", "(read-only) blocked this: no writes are allowed"},
		{ro, "touch: cannot touch 'x': Permission denied", "no writes are allowed"},
		{full, "touch: cannot touch '/etc/x': Permission denied", ""},
	} {
		got := tc.p.Explain(tc.output)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s, %q:\n got %q\nwant %q", tc.p.Mode, tc.output, got, tc.want)
		}
		if got != "" && (!strings.HasPrefix(got, "[ralph: the sandbox ("+string(tc.p.Mode)+") blocked this: ") || !strings.Contains(got, `"unsandboxed": true`)) {
			t.Errorf("note %q lacks the mode or the way out", got)
		}
	}
}

// TestRefusedWrite: a hook's error output that shows a refused write
// outside what the sandbox lets it write names the path; one inside, or
// no denial, or no sandbox, names nothing.
func TestRefusedWrite(t *testing.T) {
	t.Parallel()
	root, tmp := realDir(t), realDir(t)
	ww := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{tmp}, Network: true}
	out := "sh: 1: cannot create /nonexistent-home/.claude/hooks-logs/x.log: Permission denied\n"
	if p, ok := ww.RefusedWrite(out); !ok || p != "/nonexistent-home/.claude/hooks-logs/x.log" {
		t.Fatalf("refused write outside: %q %v", p, ok)
	}
	if _, ok := ww.RefusedWrite("sh: 1: cannot create " + filepath.Join(root, "x") + ": Permission denied\n"); ok {
		t.Fatal("a write inside the project is not the sandbox's refusal")
	}
	if _, ok := ww.RefusedWrite("all good\n"); ok {
		t.Fatal("no denial, no refusal")
	}
	if _, ok := (&Policy{Mode: FullAccess, Root: root}).RefusedWrite(out); ok {
		t.Fatal("no sandbox refuses nothing")
	}
}
