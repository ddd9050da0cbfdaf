package control

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindPrefersTheRalphThatWorks: a chat idle at its prompt never
// takes what was meant for a run beside it; two that work are named, not
// guessed at; --pid and a session pick one.
func TestFindPrefersTheRalphThatWorks(t *testing.T) {
	chat := Peer{State: State{PID: 10, Mode: "chat", SessionID: "a"}}
	run := Peer{State: State{PID: 20, Mode: "run", SessionID: "b", Working: true}}
	other := Peer{State: State{PID: 30, Mode: "oneshot", SessionID: "c", Working: true}}
	for _, c := range []struct {
		name  string
		peers []Peer
		w     Where
		want  int
		err   error
	}{
		{"run beside an idle chat", []Peer{chat, run}, Where{}, 20, nil},
		{"the idle chat alone", []Peer{chat}, Where{}, 10, nil},
		{"two working", []Peer{chat, run, other}, Where{}, 0, ErrAmbiguous},
		{"two idle", []Peer{chat, {State: State{PID: 11, Mode: "chat"}}}, Where{}, 0, ErrAmbiguous},
		{"by pid", []Peer{chat, run, other}, Where{PID: 30}, 30, nil},
		{"by pid, the idle one", []Peer{chat, run}, Where{PID: 10}, 10, nil},
		{"a pid not here", []Peer{chat, run}, Where{PID: 99}, 0, ErrNotRunning},
		{"by session", []Peer{chat, run, other}, Where{Session: "a"}, 10, nil},
		{"none", nil, Where{}, 0, ErrNotRunning},
	} {
		p, err := choose(c.peers, nil, c.w)
		if !errors.Is(err, c.err) || p.PID != c.want {
			t.Errorf("%s: pid %d, %v; want pid %d, %v", c.name, p.PID, err, c.want, c.err)
		}
	}
	_, err := choose([]Peer{chat, run, other}, nil, Where{})
	if msg := err.Error(); !strings.Contains(msg, "pid 20, ralph run") || !strings.Contains(msg, "pid 30, a one-shot") || strings.Contains(msg, "pid 10") {
		t.Errorf("the ambiguity names %q", msg)
	}
}

// TestFindRemovesTheSocketsOfTheDead: a socket whose pid is gone (a ralph
// killed with SIGKILL leaves it) is removed by the next look; one of a
// live ralph is found and asked.
func TestFindRemovesTheSocketsOfTheDead(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("RALPH_HOME", state)
	root := project(t, t.TempDir())
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true to run:", err)
	}
	stale := SocketPathIn(root, dead.Process.Pid, os.Getenv)
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := Find(context.Background(), Here(root)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("only a dead ralph's socket: %v, want ErrNotRunning", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the dead ralph's socket is still there: %v", err)
	}
	startServer(t, root)
	p, err := Find(context.Background(), Here(root))
	if err != nil || p.PID != os.Getpid() || p.Mode != "run" || p.SessionID != "s1" || !p.Working {
		t.Fatalf("the live ralph: %+v, %v", p, err)
	}
}
