package repl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// pipeInput is a ttyInput over a pipe standing in for the terminal.
func pipeInput(t *testing.T) (*ttyInput, *os.File, chan struct{}) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	escs := make(chan struct{}, 4)
	in, err := newTTYInput(int(r.Fd()), func() { escs <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.release()
		r.Close()
		w.Close()
	})
	return in, w, escs
}

type readResult struct {
	s   string
	err error
}

// readOnce reads once in the background, as readline's terminal reader does.
func readOnce(in *ttyInput) chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		buf := make([]byte, 256)
		n, err := in.Read(buf)
		ch <- readResult{string(buf[:n]), err}
	}()
	return ch
}

func expectRead(t *testing.T, ch chan readResult, want string) {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil || r.s != want {
			t.Fatalf("read %q, %v; want %q", r.s, r.err, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("no read; want %q", want)
	}
}

func TestLoneEscIsAKeyButSequencesPassThrough(t *testing.T) {
	in, w, escs := pipeInput(t)
	ch := readOnce(in)
	_, _ = w.Write([]byte("\x1b[A"))
	expectRead(t, ch, "\x1b[A")
	if len(escs) != 0 {
		t.Fatal("an arrow key counted as Esc")
	}
	ch = readOnce(in)
	_, _ = w.Write([]byte("\x1b"))
	select {
	case <-escs:
	case <-time.After(2 * time.Second):
		t.Fatal("a lone Esc was not reported")
	}
	_, _ = w.Write([]byte("x"))
	expectRead(t, ch, "x") // the Esc itself is not passed on
}

func TestBracketedPasteBecomesOneLine(t *testing.T) {
	in, w, _ := pipeInput(t)
	ch := readOnce(in)
	_, _ = w.Write([]byte("a\x1b[200~line 1\r\nline\t2\x03\x1b[201~b"))
	expectRead(t, ch, "aline 1␤line⇥2b")
	if got := unpaste("line 1␤line⇥2"); got != "line 1\nline\t2" {
		t.Fatalf("unpaste = %q", got)
	}
	// Markers cut between reads are carried over; a paste is given to
	// readline once it is whole.
	ch = readOnce(in)
	_, _ = w.Write([]byte("\x1b[200~x\r"))
	_, _ = w.Write([]byte("y\x1b[2"))
	_, _ = w.Write([]byte("01~\r"))
	expectRead(t, ch, "x␤y\r")
}

// A paste taller than a third of the screen is folded into a token that
// shows its first line and how many more there are, and is sent whole.
func TestBigPasteIsFolded(t *testing.T) {
	in, w, _ := pipeInput(t)
	in.size = func() (int, int) { return 80, 24 }
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "\tat frame %d (file.go:%d)\r\n", i, i)
	}
	go func() { _, _ = w.Write([]byte("see \x1b[200~" + b.String() + "\x1b[201~ please")) }()
	var got string
	for !strings.HasSuffix(got, "please") {
		select {
		case r := <-readOnce(in):
			got += r.s
		case <-time.After(2 * time.Second):
			t.Fatalf("no read after %q", got)
		}
	}
	if got != "see ⟪ at frame 0 (file.go:0) … 199 more lines #1⟫ please" {
		t.Fatalf("read %q", got)
	}
	want := "see " + strings.ReplaceAll(b.String(), "\r\n", "\n") + " please"
	if pend := in.folds.pending(); len(pend) != 1 {
		t.Fatalf("pending = %d folds", len(pend))
	}
	if line := in.folds.unfold(unpaste(got)); line != want {
		t.Fatalf("unfolded to %q", line)
	}
	in.folds.forget()
	if len(in.folds.pending()) != 0 {
		t.Fatal("a sent fold is still kept")
	}
	// One long line is folded too.
	long := strings.Repeat("x", 6000)
	if tok := in.folds.fold(long, 80); !strings.HasSuffix(tok, " more characters #2⟫") || len([]rune(tok)) > 80 {
		t.Fatalf("token %q", tok)
	}
}

func TestNULIsDropped(t *testing.T) {
	in, w, _ := pipeInput(t)
	ch := readOnce(in)
	_, _ = w.Write([]byte("a\x00b"))
	expectRead(t, ch, "ab")
}

func TestInjectAndClose(t *testing.T) {
	in, _, _ := pipeInput(t)
	ch := readOnce(in)
	in.Inject([]byte{3})
	expectRead(t, ch, "\x03")
	ch = readOnce(in)
	time.Sleep(20 * time.Millisecond) // let the read wait in poll
	_ = in.Close()
	select {
	case r := <-ch:
		if !errors.Is(r.err, io.EOF) {
			t.Fatalf("read after Close = %q, %v", r.s, r.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end a pending read")
	}
}

// Five pasted lines fold as the first and four more, whether or not the
// paste ends in a line break: a trailing line break starts no line.
func TestPasteFoldCountsLinesOneWay(t *testing.T) {
	var f foldStore
	for _, p := range []string{"l1\nl2\nl3\nl4\nl5\n", "l1\nl2\nl3\nl4\nl5", "l1\r\nl2\r\nl3\r\nl4\r\nl5\r\n"} {
		shown := appendPasted(nil, []byte(p))
		if tok := f.fold(unpaste(string(shown)), 80); !strings.Contains(tok, "l1 … 4 more lines") {
			t.Errorf("%q folds as %q", p, tok)
		}
	}
}

// The terminal's answers to the start-up query of its background, when
// they come after the query stopped waiting (a busy machine, a slow
// link), are no keys: "1;2c" once appeared at the prompt. They are
// dropped, whole or cut between two reads, and the keys around them kept.
func TestLateTerminalAnswersAreNoKeys(t *testing.T) {
	in, w, _ := pipeInput(t)
	ch := readOnce(in)
	_, _ = w.Write([]byte("a\x1b]11;rgb:0000/0000/0000\x1b\\b\x1b[?1;2cc\x1b]11;rgb:ffff/ffff/ffff\ad\x1b[A"))
	expectRead(t, ch, "abcd\x1b[A")
	// The reads may see the two writes apart or together.
	_, _ = w.Write([]byte("e\x1b[?62;"))
	time.Sleep(50 * time.Millisecond)
	_, _ = w.Write([]byte("22cf"))
	got := ""
	for got != "ef" && len(got) < 2 {
		select {
		case r := <-readOnce(in):
			if r.err != nil {
				t.Fatal(r.err)
			}
			got += r.s
		case <-time.After(2 * time.Second):
			t.Fatalf("read %q; want \"ef\"", got)
		}
	}
	if got != "ef" {
		t.Fatalf("read %q; want \"ef\"", got)
	}
}
