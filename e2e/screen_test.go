package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"

	termvt "github.com/ralph-dev/ralph/e2e/vt"
)

// The screen shows exactly what was said (issue 44): what the terminal
// finally holds, scrollback included, is checked on the terminal model.

// assertWordsOnce fails unless screen holds the words of vt.Numbered,
// w0 … w(n-1), once each, in order.
func assertWordsOnce(t *testing.T, screen string, n int) {
	t.Helper()
	if err := termvt.WordsOnce(screen, n); err != nil {
		t.Fatalf("%v:\n%s", err, tailOf(screen, 4000))
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// streamServer answers every request with text, streamed slowly in small
// pieces.
func streamServer(t *testing.T, text string, chunk int) string {
	t.Helper()
	js, _ := json.Marshal(text)
	return inlineServer(t, fmt.Sprintf(`{"name":"screen","loop":true,"responses":[{"text":%s,"chunk_size":%d,"chunk_delay_ms":1}]}`, js, chunk)).URL
}

// A paragraph taller than the window, streamed without a newline (a long
// answer, a JSON line, minified code), is on the screen once: in chat it
// used to be drawn again into the scrollback at every piece.
func TestScreenLongParagraphOnce(t *testing.T) {
	t.Parallel()
	// About 80 rows at 100 columns: twice the window.
	answer, words := termvt.Numbered(1500)
	url := streamServer(t, answer, 23)
	t.Run("chat", func(t *testing.T) {
		r := startPTY(t, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "chat", "--base-url", url)
		r.waitIdle(10*time.Second, nil)
		r.typeKeys("go on\r")
		r.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, fmt.Sprintf("w%d", words-1)) })
		r.typeKeys("\x04")
		if code := r.exitCode(10 * time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		assertWordsOnce(t, r.screen(), words)
	})
	t.Run("oneshot", func(t *testing.T) {
		r := startPTY(t, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "--base-url", url, "go on")
		if code := r.exitCode(30 * time.Second); code != 0 {
			t.Fatalf("exit %d:\n%s", code, r.screen())
		}
		assertWordsOnce(t, r.screen(), words)
	})
}

// htmlAnswer is an answer with text markdown reads as HTML: generics,
// comparisons, tags, a comment, an autolink.
const htmlAnswer = "It returns Vec<u8>, a List<String> and Promise<void>.\n\n" +
	"<b>bold</b> a<c and x>y\n\n" +
	"Use `Option<T>` or Result<T, E>; see <https://example.com/docs>. <!-- keep me -->\n"

// Text shaped like an HTML tag is shown as written, in chat and in the
// one-shot on a terminal; it used to vanish ("It returns Vec, a List and
// Promise.").
func TestScreenKeepsTextShapedLikeHTML(t *testing.T) {
	t.Parallel()
	url := streamServer(t, htmlAnswer, 7)
	want := []string{"It returns Vec<u8>, a List<String> and Promise<void>.", "<b>bold</b> a<c and x>y", "Option<T>", "Result<T, E>", "https://example.com/docs", "<!-- keep me -->"}
	check := func(t *testing.T, screen string) {
		t.Helper()
		flat := strings.Join(strings.Fields(screen), " ")
		for _, w := range want {
			if !strings.Contains(flat, w) {
				t.Errorf("the screen lacks %q:\n%s", w, screen)
			}
		}
	}
	t.Run("chat", func(t *testing.T) {
		r := startPTYAnswering(t, darkTerminal, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "chat", "--base-url", url)
		r.waitIdle(10*time.Second, nil)
		r.typeKeys("types?\r")
		r.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "example.com/docs") })
		r.typeKeys("\x04")
		if code := r.exitCode(10 * time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		check(t, r.screen())
	})
	t.Run("oneshot", func(t *testing.T) {
		r := startPTYAnswering(t, darkTerminal, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "--base-url", url, "types?")
		if code := r.exitCode(20 * time.Second); code != 0 {
			t.Fatalf("exit %d:\n%s", code, r.screen())
		}
		check(t, r.screen())
	})
}

// A terminal that reports no size (0×0: some CI ptys, script, editors'
// shells) gets the answer rendered, laid out at 80 columns; the one-shot
// used to leave the raw stream.
func TestScreenUnknownSizeIsRendered(t *testing.T) {
	t.Parallel()
	url := streamServer(t, renderAnswer, 9)
	check := func(t *testing.T, r *ptyRalph, raw string) {
		t.Helper()
		screen := r.screen()
		if strings.Contains(screen, "```") || !strings.Contains(screen, `fmt.Println("hi", 42)`) || !strings.Contains(screen, "go run .") {
			t.Fatalf("the answer was not rendered:\n%s", screen)
		}
		if n := len(codeColours(raw)); n < 4 {
			t.Errorf("the go code block has %d distinct colours, want several", n)
		}
		for _, l := range strings.FieldsFunc(anyCSI.ReplaceAllString(raw, ""), func(r rune) bool { return r == '\n' || r == '\r' }) {
			if w := runewidth.StringWidth(l); w > 80 {
				t.Errorf("a line is %d columns, want the 80 of a terminal of unknown size: %q", w, l)
			}
		}
	}
	t.Run("chat", func(t *testing.T) {
		r := startPTYAnswering(t, darkTerminal, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "chat", "--base-url", url)
		// Chat asks the terminal its size at every layout.
		if err := pty.Setsize(r.ptm, &pty.Winsize{}); err != nil {
			t.Fatal(err)
		}
		r.waitIdle(10*time.Second, nil)
		off := r.out.Len()
		r.typeKeys("show me a program\r")
		r.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "go run .") && !strings.Contains(s, "```") })
		raw := r.out.Since(off)
		r.typeKeys("\x04")
		if code := r.exitCode(10 * time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		check(t, r, raw)
	})
	t.Run("oneshot", func(t *testing.T) {
		// The one-shot reads the size once, after start-up: the size is
		// taken away before it gets that far (its package initialisation
		// alone takes tens of milliseconds).
		r := startPTYAnswering(t, darkTerminal, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "--base-url", url, "show me a program")
		if err := pty.Setsize(r.ptm, &pty.Winsize{}); err != nil {
			t.Fatal(err)
		}
		if code := r.exitCode(20 * time.Second); code != 0 {
			t.Fatalf("exit %d:\n%s", code, r.screen())
		}
		check(t, r, r.out.Since(0))
	})
}
