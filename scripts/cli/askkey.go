package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// askKey is ask for a question that one key answers at once, without
// Enter (an approval's y, n, t, a, p; the plan's a, r, e, d; a yes or
// no). A key the question does not take is answered at once with the keys
// it takes (terminal.KeyQuestion, which chat follows too), and the
// question goes on waiting. The terminal is put in cbreak mode for it
// (keys come one by one, unechoed; Ctrl-C still signals) and read by
// polling, so no read outlives the question. Where that cannot be done
// (the input is no terminal, or a line read of an earlier question is
// still pending) it is ask: the next line typed, for the caller to read.
func (q *questions) askKey(ctx context.Context, question, prompt string, kq terminal.KeyQuestion, bell bool) (string, error) {
	select {
	case q.turn <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if err := q.ready(); err != nil {
		<-q.turn
		return "", err
	}
	fd, ok := q.keyFD()
	if !ok {
		<-q.turn
		return q.ask(ctx, question, prompt, bell)
	}
	defer func() { <-q.turn }()
	saved, err := terminal.Cbreak(fd)
	if err != nil {
		return "", err
	}
	defer func() { _ = saved.Restore() }()
	if q.pause != nil {
		defer q.pause()()
	}
	fmt.Fprintf(q.out, "%s\n%s\n%s ", q.ring(question, bell), q.wrapped(question), prompt)
	for {
		b, err := q.readKey(ctx, fd)
		if err != nil {
			fmt.Fprintln(q.out)
			return "", err
		}
		if b == 4 { // Ctrl-D: the person will not answer
			fmt.Fprintln(q.out)
			return "", errInputClosed
		}
		press, answer := kq.Press(rune(b))
		// What came with the key within a moment is dropped: the rest
		// of a word typed out of habit ("yes⏎") is not left for the
		// next question, nor the rest of a paste, of a character of
		// several bytes or of an escape sequence for another hint.
		q.drainKeys(fd)
		switch press {
		case terminal.PressAnswer:
			fmt.Fprintln(q.out, answer)
			return answer, nil
		case terminal.PressUnoffered:
			fmt.Fprintf(q.out, "\n%s\n%s ", kq.Hint(), prompt)
		}
	}
}

// keyFD is the terminal's descriptor when keys can be read from it one by
// one: it is a terminal, the platform reads keys one by one (the Windows
// console does not, for ralph: there the answer is the line typed), and
// nothing buffered or pending reads it.
func (q *questions) keyFD() (int, bool) {
	q.mu.Lock()
	f, ok := q.f.(*os.File)
	q.mu.Unlock()
	if !terminal.OneKey || !ok || q.pending != nil || q.br.Buffered() > 0 || !terminal.IsTerminal(f) {
		return 0, false
	}
	return int(f.Fd()), true
}

// readKey waits for one byte from the terminal, or ctx's end.
func (q *questions) readKey(ctx context.Context, fd int) (byte, error) {
	var buf [1]byte
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := terminal.ReadWait(fd, -1, buf[:], 100*time.Millisecond)
		if err != nil {
			return 0, errInputClosed
		}
		if n > 0 {
			return buf[0], nil
		}
	}
}

// drainKeys drops what the terminal holds now or within a moment, the
// rest of a word typed with a key.
func (q *questions) drainKeys(fd int) {
	deadline := time.Now().Add(50 * time.Millisecond)
	var buf [64]byte
	for time.Now().Before(deadline) {
		if _, err := terminal.ReadWait(fd, -1, buf[:], 10*time.Millisecond); err != nil {
			return
		}
	}
}
