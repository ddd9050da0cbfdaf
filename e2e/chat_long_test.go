package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// longAnswer is an answer of n lines like the lines of a source file, each
// about width characters, some of them blank.
func longAnswer(n, width int) string {
	var b strings.Builder
	for i := range n {
		switch {
		case i%37 == 36:
			b.WriteString("\n")
		default:
			line := fmt.Sprintf("%04d: func step%d(x int) int { return x*%d + len(\"some text\") } //", i, i, i)
			for len(line) < width {
				line += " more words"
			}
			b.WriteString(line + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// answerOnScreen is what the terminal shows between the line the person
// typed and the idle prompt after the answer.
func answerOnScreen(t *testing.T, screen, typed string) string {
	t.Helper()
	answer := answerIn(screen, typed)
	if answer == "" {
		t.Fatalf("no answer between the typed line and the prompt:\n%s", screen)
	}
	return answer
}

// answerIn is the text between the last prompt line holding typed and the
// idle prompt after it, or "" when there is none yet.
func answerIn(screen, typed string) string {
	lines := strings.Split(screen, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "ralph>") && strings.Contains(l, typed) {
			start = i + 1
		}
	}
	end := len(lines) - 1
	for end > start && !strings.HasPrefix(lines[end], "ralph>") {
		end--
	}
	if start < 0 || end <= start {
		return ""
	}
	return strings.Join(lines[start:end], "\n")
}

// expectedScreen is the answer as the screen lays it out: each line
// wrapped at the terminal's width less one column.
func expectedScreen(answer string) string {
	var out []string
	for _, l := range strings.Split(answer, "\n") {
		out = append(out, terminal.Wrap(l, ptyCols-1))
	}
	return strings.Join(out, "\n")
}

// Long answers streamed at full speed reach the screen whole: the
// terminal (scrollback included) shows exactly the answer the transcript
// holds, line for line, every time. Before the painter, a fast answer of
// a few hundred lines lost lines in the middle or its tail.
func TestChatLongAnswersVT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer string
	}{
		{"2000 lines", longAnswer(2000, 40)},
		{"200 KB", longAnswer(1320, 150)}, // 202 KB
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js, _ := json.Marshal(tc.answer)
			srv := inlineServer(t, `{"name":"long","loop":true,"responses":[{"text":`+string(js)+`,"chunk_size":16}]}`)
			want := expectedScreen(tc.answer)
			runs := 20
			if testing.Short() {
				runs = 2
			}
			for run := range runs {
				r := startPTY(t, t.TempDir(), cleanEnv(t, "NO_COLOR=1", "TERM=xterm"), "chat", "-y", "--base-url", srv.URL)
				r.waitIdle(20*time.Second, nil)
				typed := fmt.Sprintf("show me the file %d", run)
				r.typeKeys(typed + "\r")
				last := tc.answer[strings.LastIndexByte(tc.answer, '\n')+1:]
				// The bound only catches a hang: under the parallel suite's
				// load, 2000 lines through the terminal take a while.
				r.waitIdle(ralphRunLimit, func(s string) bool { return strings.Contains(s, last[:20]) })
				// The prompt may come back a moment before a last repaint:
				// the screen is read until it shows the answer, for a
				// couple of seconds at most.
				var got string
				for end := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					if got = answerOnScreen(t, r.screen(), typed); got == want || time.Now().After(end) {
						break
					}
				}
				if got != want {
					t.Fatalf("run %d: the screen differs from the answer: %s", run, firstLineDiff(got, want))
				}
				r.leave(0, 20*time.Second)
			}
		})
	}
}

// firstLineDiff says where two texts first differ, by line.
func firstLineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is %q, want %q (%d lines, want %d)", i+1, g[i], w[i], len(g), len(w))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// A paste taller than the screen is folded into one line of the prompt:
// it appears at once, leaves no copies of the prompt in the scrollback,
// and is sent whole.
func TestChatBigPasteIsFoldedVT(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"paste","loop":true,"responses":[{"text":"got it"}]}`)
	r := startPTY(t, t.TempDir(), cleanEnv(t, "NO_COLOR=1", "TERM=xterm"), "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "panic: at frame %d in /src/project/pkg/file%d.go:%d +0x%x\r\n", i, i, 10*i, 16*i)
	}
	off := r.out.Len()
	pasted := time.Now()
	r.typeKeys("look at this \x1b[200~" + b.String() + "\x1b[201~")
	// 200 lines: the first and 199 more (the last line break starts none).
	at, ok := r.out.waitRaw(off, 10*time.Second, func(_, cursor string) bool { return strings.Contains(cursor, "199 more lines") })
	if !ok {
		t.Fatalf("the folded paste did not appear:\n%s", r.screen())
	}
	took := at.Sub(pasted)
	t.Logf("the paste appeared after %s", took)
	// Generous: the figure itself is measured by BenchmarkChatPaste.
	if took > 2*time.Second {
		t.Errorf("the paste took %s to appear", took)
	}
	r.typeKeys("\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "got it") })
	if n := strings.Count(r.screen(), "look at this"); n > 1 {
		t.Errorf("%d copies of the prompt line on the screen and in its scrollback:\n%s", n, r.screen())
	}
	r.leave(0, 20*time.Second)
	msgs := savedMessages(t, sessionDir(t, r.cmd.Dir))
	found := false
	for _, m := range msgs {
		if strings.Contains(m.Content, "frame 199 in /src/project/pkg/file199.go") && strings.Contains(m.Content, "look at this panic: at frame 0") {
			found = true
		}
	}
	if !found {
		t.Errorf("the paste was not sent whole: %+v", msgs)
	}
}
