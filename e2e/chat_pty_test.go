package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The size of the test terminal.
const ptyCols, ptyRows = 100, 40

// ptyRalph is ralph running in a pseudo-terminal, driven like a person at
// a keyboard: the tests type into the master side and read what the
// terminal shows.
type ptyRalph struct {
	t      testing.TB
	cmd    *exec.Cmd
	ptm    *os.File // master: keystrokes in, screen bytes out
	pts    *os.File // slave, kept open so the terminal outlives ralph for stty
	out    *screenLog
	exited chan struct{}
	err    error
	// sttyBefore is `stty -a` of the terminal before ralph started.
	sttyBefore string
	started    time.Time
}

// screenLog collects everything written to the terminal and wakes waiters
// on every write, so a test can time the moment a prompt appears.
type screenLog struct {
	mu   sync.Mutex
	b    bytes.Buffer
	vt   *vt
	cond *sync.Cond
}

func newScreenLog() *screenLog {
	l := &screenLog{vt: newVT(ptyCols, ptyRows)}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *screenLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.vt.write(p)
	l.mu.Unlock()
	l.cond.Broadcast()
	return len(p), nil
}

// Screen is what the terminal shows now (scrollback included) and the
// line the cursor is on.
func (l *screenLog) Screen() (string, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.vt.text(), l.vt.cursorLine()
}

// waitScreen blocks until cond holds for the screen, or the deadline
// passes; it returns the time the condition first held.
//
// Laying out the screen costs time that grows with the scrollback, and it
// holds the lock the terminal's reader writes under. Evaluated after every
// write, a screen of 200 KB under the race detector on a busy machine
// starved the reader: ralph's writes to the full terminal blocked, and its
// status line with them, until the test gave up. So once an evaluation
// takes over a millisecond, the next one waits four times as long (a timer
// wakes it if nothing is written), and the reader keeps most of the lock.
func (l *screenLog) waitScreen(limit time.Duration, cond func(screen, cursor string) bool) (time.Time, bool) {
	deadline := time.Now().Add(limit)
	timer := time.AfterFunc(limit, l.cond.Broadcast)
	defer timer.Stop()
	wake := time.AfterFunc(limit, l.cond.Broadcast)
	defer wake.Stop()
	var next time.Time
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if start := time.Now(); !start.Before(next) {
			if cond(l.vt.text(), l.vt.cursorLine()) {
				return time.Now(), true
			}
			if took := time.Since(start); took > time.Millisecond {
				next = time.Now().Add(4 * took)
				wake.Reset(4 * took)
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		l.cond.Wait()
	}
}

func (l *screenLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// Since returns what was written after offset.
func (l *screenLog) Since(off int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if off > l.b.Len() {
		return ""
	}
	return string(l.b.Bytes()[off:])
}

// startPTY starts ralph with the pseudo-terminal as its standard input,
// output and error and as its controlling terminal. Like some terminals,
// it answers no queries.
func startPTY(t testing.TB, dir string, env []string, args ...string) *ptyRalph {
	t.Helper()
	return startPTYAnswering(t, "", dir, env, args...)
}

// startPTYAnswering is startPTY on a terminal that answers ralph's
// background query (OSC 11 followed by DA1) with reply, as a real
// terminal does.
func startPTYAnswering(t testing.TB, reply string, dir string, env []string, args ...string) *ptyRalph {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatalf("no pseudo-terminal could be opened, and this test needs one: %v", err)
	}
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: ptyRows, Cols: ptyCols}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = onTerminal()
	r := &ptyRalph{t: t, cmd: cmd, ptm: ptm, pts: pts, out: newScreenLog(), exited: make(chan struct{})}
	r.sttyBefore = r.stty()
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var w io.Writer = r.out
	if reply != "" {
		w = io.MultiWriter(r.out, &queryAnswerer{ptm: ptm, reply: reply})
	}
	go func() { _, _ = io.Copy(w, ptm) }()
	go func() {
		r.err = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
		// Closing the slave first makes the master's reads fail, which
		// ends the copying goroutine.
		_ = pts.Close()
		_ = ptm.Close()
	})
	return r
}

// typeKeys writes keystrokes to the terminal.
func (r *ptyRalph) typeKeys(s string) {
	r.t.Helper()
	if _, err := r.ptm.Write([]byte(s)); err != nil {
		r.t.Fatalf("typing %q: %v", s, err)
	}
}

// waitFor waits until the screen shows want.
func (r *ptyRalph) waitFor(want string, limit time.Duration) {
	r.t.Helper()
	if _, ok := r.out.waitScreen(limit, func(s, _ string) bool { return strings.Contains(s, want) }); !ok {
		r.t.Fatalf("timed out after %s waiting for %q; the screen shows:\n%s%s", limit, want, r.screen(), r.stacks())
	}
}

// waitIdle waits until the cursor sits on the idle prompt and cond holds
// for the screen; it returns when that first happened.
func (r *ptyRalph) waitIdle(limit time.Duration, cond func(screen string) bool) time.Time {
	r.t.Helper()
	at, ok := r.out.waitScreen(limit, func(s, cur string) bool {
		return strings.HasPrefix(cur, "ralph>") && (cond == nil || cond(s))
	})
	if !ok {
		r.t.Fatalf("timed out after %s waiting for the idle prompt; the screen shows:\n%s%s", limit, r.screen(), r.stacks())
	}
	return at
}

// stacks has a ralph that stopped answering print every goroutine's
// stack (SIGQUIT), and returns what it printed after the screen so far:
// a hang seen only on a loaded CI machine says where it hung.
func (r *ptyRalph) stacks() string {
	select {
	case <-r.exited:
		return ""
	default:
	}
	off := len(r.out.Since(0))
	if r.cmd.Process == nil || r.cmd.Process.Signal(syscall.SIGQUIT) != nil {
		return ""
	}
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
	}
	return "\nits goroutines (SIGQUIT):\n" + r.out.Since(off)
}

// waitRaw blocks until cond holds for the bytes written after off and the
// line the cursor is on; it is cheap enough to time keystroke latencies
// with (it does not lay out the whole screen on every write).
func (l *screenLog) waitRaw(off int, limit time.Duration, cond func(raw, cursor string) bool) (time.Time, bool) {
	deadline := time.Now().Add(limit)
	timer := time.AfterFunc(limit, l.cond.Broadcast)
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if off <= l.b.Len() && cond(string(l.b.Bytes()[off:]), l.vt.cursorLine()) {
			return time.Now(), true
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		l.cond.Wait()
	}
}

// screen is what the terminal shows.
func (r *ptyRalph) screen() string {
	s, _ := r.out.Screen()
	return s
}

// exitCode waits for ralph to exit.
func (r *ptyRalph) exitCode(limit time.Duration) int {
	r.t.Helper()
	select {
	case <-r.exited:
	case <-time.After(limit):
		r.t.Fatalf("ralph did not exit within %s; the screen shows:\n%s", limit, r.screen())
	}
	r.drainOutput(limit)
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		return ee.ExitCode()
	}
	if r.err != nil {
		r.t.Fatal(r.err)
	}
	return 0
}

// leave types Ctrl-D, as a person leaving the chat does, and checks the
// way out with expectExit.
func (r *ptyRalph) leave(wantCode int, limit time.Duration) {
	r.t.Helper()
	r.typeKeys("\x04")
	r.expectExit(wantCode, limit)
}

// expectExit waits up to limit for ralph to exit and fails unless it
// exited with wantCode and left the terminal's modes (`stty -a`) as it
// found them: every way out of a session on a terminal is checked for
// both, since a wrong code or a terminal left raw is what the person is
// left with.
func (r *ptyRalph) expectExit(wantCode int, limit time.Duration) {
	r.t.Helper()
	if code := r.exitCode(limit); code != wantCode {
		r.t.Fatalf("exit %d, want %d; the screen shows:\n%s", code, wantCode, r.screen())
	}
	if after := r.stty(); after != r.sttyBefore {
		r.t.Fatalf("the terminal's modes (stty -a) changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
}

// drainMark is written to the terminal after ralph exits. An operating
// system command, it shows nothing on the screen.
const drainMark = "\x1b]ralph-test-drained\x07"

// drainOutput returns once everything ralph wrote to the terminal has
// been read from the master side. The exit alone does not say so: the
// test keeps the slave open (for stty), so the master never reads an end
// of file, and on a busy machine the copying goroutine may still be
// behind. A mark written to the slave now queues behind ralph's last
// byte; once it is read, so is all of ralph's output. The mark is then
// cut from the log.
func (r *ptyRalph) drainOutput(limit time.Duration) {
	r.t.Helper()
	off := r.out.Len()
	if _, err := r.pts.WriteString(drainMark); err != nil {
		r.t.Fatalf("writing to the terminal: %v", err)
	}
	seen := func(raw, _ string) bool { return strings.Contains(raw, drainMark) }
	if _, ok := r.out.waitRaw(off, limit, seen); !ok {
		r.t.Fatalf("ralph's output was not all read within %s", limit)
	}
	r.out.mu.Lock()
	defer r.out.mu.Unlock()
	b := r.out.b.Bytes()
	i := off + bytes.Index(b[off:], []byte(drainMark))
	rest := append([]byte(nil), b[i+len(drainMark):]...)
	r.out.b.Truncate(i)
	r.out.b.Write(rest)
}

// stty returns `stty -a` of the terminal.
func (r *ptyRalph) stty() string {
	r.t.Helper()
	out, err := exec.Command("stty", "-a", "-F", r.pts.Name()).CombinedOutput()
	if err != nil {
		r.t.Fatalf("stty: %v: %s", err, out)
	}
	return string(out)
}

// assertNotGarbled fails when output landed on a prompt's line: progress
// written after a prompt instead of above it.
func assertNotGarbled(t testing.TB, screen string) {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		i := strings.Index(l, "› ")
		if j := strings.Index(l, "ralph> "); i < 0 || j >= 0 && j < i {
			i = j
		}
		if i < 0 {
			continue
		}
		rest := l[i:]
		for _, mark := range []string{"↳ ", "✗ ", "• ", "stopped:", "queued:", "run `"} {
			if strings.Contains(rest, mark) {
				t.Fatalf("output landed on the prompt line %q:\n%s", l, screen)
			}
		}
	}
}

// queryAnswerer plays the terminal's side of ralph's background query: on
// each DA1 request ("ESC [ c", which ralph sends after OSC 11) it writes
// reply to the terminal's input.
type queryAnswerer struct {
	ptm   *os.File
	reply string
	tail  []byte
}

func (a *queryAnswerer) Write(p []byte) (int, error) {
	a.tail = append(a.tail, p...)
	for {
		i := bytes.Index(a.tail, []byte("\x1b[c"))
		if i < 0 {
			break
		}
		_, _ = a.ptm.Write([]byte(a.reply))
		a.tail = a.tail[i+3:]
	}
	if len(a.tail) > 8 {
		a.tail = append([]byte(nil), a.tail[len(a.tail)-8:]...)
	}
	return len(p), nil
}
