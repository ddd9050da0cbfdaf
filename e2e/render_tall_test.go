//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/live/livetest"
)

// Issue 68, items 1, 8 and 9: what a long answer, a notice and a line
// typed during a stream leave on a terminal.

// wordChunks cuts text as a model streams it: a word and the space or
// newline after it at a time, and a fence in two pieces, as tokenizers
// send it.
func wordChunks(text string) []string {
	var out []string
	for rest := text; rest != ""; {
		n := strings.IndexAny(rest, " \n") + 1
		if n == 0 {
			n = len(rest)
		}
		if strings.HasPrefix(rest, "```") {
			n = 2
		}
		out = append(out, rest[:n])
		rest = rest[n:]
	}
	return out
}

// tallServer streams livetest.TallAnswer(cols) word by word at about a real
// model's pace (a word every 8 ms, some 150 tokens a second).
func tallServer(t *testing.T, cols int) string {
	js, _ := json.Marshal(wordChunks(livetest.TallAnswer(cols)))
	return inlineServer(t, `{"name":"tall","loop":true,"responses":[{"text_chunks":`+string(js)+`,"chunk_delay_ms":8}]}`).URL
}

// assertRenderedTall checks a terminal's text, scrollback included, for
// livetest.TallAnswer: nothing of the raw markdown, every part of the content
// once, and no held block's status row left behind.
func assertRenderedTall(t *testing.T, what, screen string) {
	t.Helper()
	for _, raw := range []string{"```", "> a quote", "- [ ]", "- [x]", "|---|", "| row0 |"} {
		if strings.Contains(screen, raw) {
			t.Errorf("%s: the raw %q is in the scrollback:\n%s", what, raw, tailOf(screen, 6000))
		}
	}
	for _, want := range []string{"x0 := step(0)", "x30 := step(30)", "x59 := step(59)", "wide0 ", "wide39 ", "row7", "a quote here", "a task", "The end."} {
		if n := strings.Count(screen, want); n != 1 {
			t.Errorf("%s: %q is there %d times, want once:\n%s", what, want, n, tailOf(screen, 6000))
		}
	}
	if strings.Contains(screen, "streaming a long block") {
		t.Errorf("%s: the status row of a held block stayed:\n%s", what, tailOf(screen, 6000))
	}
}

// A long answer is rendered whole in chat in tmux, at two pane sizes: a
// code block taller than the window, one wider, and a wide table used to
// leave the raw stream in the scrollback from that block on (fences,
// quotes, task items). Meanwhile the live region says a long block is
// streaming.
func TestFirstHour2TallBlocksRenderedInTmux(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		cols, rows := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", cols, rows), func(t *testing.T) {
			t.Parallel()
			c := startTmux(t, t.TempDir(), nil, cols, rows, "chat", "--base-url", tallServer(t, cols))
			c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
			c.tmux("send-keys", "show me the plan", "Enter")
			held := false
			c.waitFor("the answer", 90*time.Second, func(s string) bool {
				held = held || strings.Contains(s, "streaming a long block")
				return strings.Contains(s, "The end.") && idlePrompt.MatchString(s) && strings.Count(s, "ralph>") >= 2
			})
			time.Sleep(300 * time.Millisecond)
			screen := c.tmux("capture-pane", "-p", "-S", "-")
			assertRenderedTall(t, fmt.Sprintf("%d×%d", cols, rows), screen)
			if !held {
				t.Errorf("no \"streaming a long block\" while the tall blocks streamed")
			}
		})
	}
}

// The one-shot lays its answer out with the same model: on a terminal,
// the same answer is rendered whole there too.
func TestFirstHour2TallBlocksRenderedOneShot(t *testing.T) {
	t.Parallel()
	r := startPTYAnswering(t, darkTerminal, t.TempDir(), cleanEnv(t, "TERM=xterm-256color"), "--base-url", tallServer(t, ptyCols), "show me the plan")
	r.expectExit(0, 90*time.Second)
	assertRenderedTall(t, "one-shot", r.screen())
}

// A notice of ralph's has a line of its own above the one-shot's status
// line, never the status line's end; the withheld-variable notice names
// a provider setting as one (OPENAI_BASE_URL is no credential), and
// comes after the first command, not before its approval question.
func TestFirstHour2NoticeOnItsOwnLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo hi"}}, "Finished."))
	env := append(chatEnv(t), "OPENAI_BASE_URL="+srv.URL, "AWS_REGION=eu-west-1", "DEPLOY_TOKEN=abc")
	r := startPTY(t, dir, env, "--base-url", srv.URL, "say hi")
	const question = "run `echo hi`? [y]es"
	r.waitFor(question, 20*time.Second)
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return strings.HasPrefix(cur, "allow? ") }); !ok {
		t.Fatalf("no prompt; the screen shows:\n%s", r.screen())
	}
	r.typeKeys("y\r")
	r.waitFor("Finished.", 20*time.Second)
	r.expectExit(0, 20*time.Second)
	screen := r.screen()
	flat := strings.ReplaceAll(screen, "\n", "")
	notice := strings.Index(flat, "commands run without")
	if notice < 0 {
		t.Fatalf("no notice of the variables withheld:\n%s", screen)
	}
	for _, row := range strings.Split(screen, "\n") {
		if strings.Contains(row, "commands run without") && !strings.HasPrefix(row, "ralph: commands run without") {
			t.Errorf("the notice shares its row: %q", row)
		}
	}
	if q := strings.Index(flat, question); notice < q {
		t.Errorf("the notice came before the approval question:\n%s", screen)
	}
	for _, want := range []string{"DEPLOY_TOKEN, which looks like credentials", "AWS_REGION, OPENAI_BASE_URL, provider and cloud settings"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the notice does not say %q:\n%s", want, screen)
		}
	}
}

// A line typed while an answer streams is said queued at once, under the
// answer, while the answer goes on; it came only once the stream stopped,
// 5 s and more later. Once the answer is written, the line is below it.
func TestFirstHour2QueuedShowsAtOnce(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d says a few words about step %d.\n\n", i, i)
	}
	b.WriteString("The end.")
	js, _ := json.Marshal(wordChunks(b.String()))
	url := inlineServer(t, `{"name":"queued","responses":[{"text_chunks":`+string(js)+`,"chunk_delay_ms":25},{"text":"ok, noted"}]}`).URL
	c := startTmux(t, t.TempDir(), nil, 100, 30, "chat", "--base-url", url)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "go on", "Enter")
	c.waitFor("the stream to start", 20*time.Second, func(s string) bool { return strings.Contains(s, "Paragraph 3 ") })
	typed := time.Now()
	c.tmux("send-keys", "also this", "Enter")
	c.waitFor("the queued line", 20*time.Second, func(s string) bool { return strings.Contains(s, "queued") })
	took := time.Since(typed)
	if screen := c.screen(); strings.Contains(screen, "The end.") {
		t.Fatalf("the queued line came only after the answer (%s):\n%s", took, tailOf(screen, 3000))
	}
	if took > 2*time.Second {
		t.Errorf("the queued line took %s to show", took)
	}
	c.waitFor("the second answer", 90*time.Second, func(s string) bool {
		return strings.Contains(s, "ok, noted") && idlePrompt.MatchString(s)
	})
	time.Sleep(200 * time.Millisecond)
	screen := c.screen()
	if n := strings.Count(screen, "queued: "); n != 1 {
		t.Errorf("the queued line is there %d times, want once:\n%s", n, tailOf(screen, 4000))
	}
	if end, q := strings.Index(screen, "The end."), strings.Index(screen, "queued: "); q < end {
		t.Errorf("the queued line is not below the answer:\n%s", tailOf(screen, 4000))
	}
	for i := range 40 {
		if n := strings.Count(screen, fmt.Sprintf("Paragraph %d says", i)); n != 1 {
			t.Errorf("paragraph %d is there %d times:\n%s", i, n, tailOf(screen, 4000))
			break
		}
	}
}
