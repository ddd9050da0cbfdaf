//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	termvt "github.com/ralph-dev/ralph/e2e/vt"
)

// The screen is exact at any size, during a stream too (issue 57): a
// terminal that reflows its rows on a resize (tmux here, as the person
// who found it used) keeps every word of an answer streamed across
// resizes once, and no status line in the scrollback. What tmux holds is
// read with capture-pane -J, which joins wrapped rows.

// tmuxChat is ralph chat in a tmux session of its own server.
type tmuxChat struct {
	t    *testing.T
	sock string
}

func startTmuxChat(t *testing.T, url string, cols, rows int) *tmuxChat {
	t.Helper()
	return startTmux(t, t.TempDir(), nil, cols, rows, "chat", "--base-url", url)
}

// startTmux is ralph with args in a tmux session of its own server, in
// dir, with cleanEnv and extra in its environment.
func startTmux(t *testing.T, dir string, extra []string, cols, rows int, args ...string) *tmuxChat {
	t.Helper()
	needTool(t, "tmux", "tmux")
	tdir := t.TempDir()
	conf := filepath.Join(tdir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g history-limit 50000\nset -g default-terminal xterm-256color\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &tmuxChat{t: t, sock: filepath.Join(tdir, "tmux.sock")}
	targs := []string{"-S", c.sock, "-f", conf, "new-session", "-d", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "--", "env", "-i"}
	targs = append(targs, cleanEnv(t, append([]string{"TERM=xterm-256color"}, extra...)...)...)
	targs = append(targs, ralphBin)
	cmd := exec.Command("tmux", append(targs, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(c.tmux("display-message", "-p", "#{pane_pid}")))
	t.Cleanup(func() {
		// ralph saves its session when the terminal goes away; the
		// project's directory is removed once it is done.
		_ = exec.Command("tmux", "-S", c.sock, "kill-server").Run()
		for i := 0; i < 500 && pid > 0 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return c
}

func (c *tmuxChat) tmux(args ...string) string {
	c.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", c.sock}, args...)...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the whole pane, scrollback included, wrapped rows joined.
func (c *tmuxChat) screen() string { return c.tmux("capture-pane", "-J", "-p", "-S", "-") }

func (c *tmuxChat) resize(cols int) { c.tmux("resize-window", "-x", fmt.Sprint(cols), "-y", "30") }

func (c *tmuxChat) waitFor(what string, d time.Duration, cond func(string) bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := c.screen()
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waited %v for %s:\n%s", d, what, tailOf(s, 3000))
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// idle is the chat's prompt with no work: the answer is done.
var idlePrompt = regexp.MustCompile(`(?m)^ralph>[ ]*$`)

// streamWithResizes streams answer, shrinks, grows and shrinks the window
// back while it streams, and returns the pane once the chat is idle.
//
// The stream is held for each resize until the pane has settled: a
// terminal applies a resize between two bytes of output it has not read
// yet, and a region drawn for the old width but read after the reflow
// cannot be erased by any count of rows, whatever ralph does. On a busy
// machine tmux lags that far behind the pane's output, and words came
// twice. Held, the resize still lands mid-answer, with the live region on
// the screen, which is what these tests are about.
func streamWithResizes(t *testing.T, answer string, chunk, delayMS int, progress func(string) bool) string {
	hold := newStreamGate(t)
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: answer, ChunkSize: chunk, ChunkDelayMS: delayMS, Hold: hold.Wait}
	})
	t.Cleanup(srv.Close)
	c := startTmuxChat(t, srv.URL, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "go on", "Enter")
	c.waitFor("the stream to start", 20*time.Second, progress)
	for _, cols := range []int{50, 100, 40} {
		c.resizeHeld(hold, cols)
	}
	c.waitFor("the answer to end", 60*time.Second, func(s string) bool {
		return idlePrompt.MatchString(s) && strings.Count(s, "ralph>") >= 2
	})
	time.Sleep(200 * time.Millisecond)
	return c.screen()
}

// resizeHeld resizes the window to cols columns while the stream is held
// (at hold, where the stand-in's Hold waits) and the pane has settled,
// then lets the stream go on for a moment.
func (c *tmuxChat) resizeHeld(hold *streamGate, cols int) {
	c.t.Helper()
	hold.Hold()
	c.settle()
	c.resize(cols)
	time.Sleep(400 * time.Millisecond)
	hold.Open()
	time.Sleep(400 * time.Millisecond)
}

// settle waits until the answer's words on the pane have stayed the same
// for a moment: tmux has read what ralph wrote of the answer (the status
// line's clock goes on changing, so only the words are compared).
func (c *tmuxChat) settle() {
	c.t.Helper()
	words := func() string { return strings.Join(answerWord.FindAllString(c.screen(), -1), " ") }
	last := words()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(150 * time.Millisecond)
		now := words()
		if now == last {
			return
		}
		last = now
	}
	c.t.Fatalf("the answer on the pane never settled:\n%s", tailOf(c.screen(), 3000))
}

// answerWord is a word of the resize tests' answers.
var answerWord = regexp.MustCompile(`\bw\d+|\btick\w*`)

func assertNoStatusLine(t *testing.T, screen string) {
	t.Helper()
	if strings.Contains(screen, "Ctrl-C stops") {
		t.Fatalf("a status line stayed in the scrollback:\n%s", tailOf(screen, 3000))
	}
}

// A 600-word paragraph streamed while the window shrinks, grows and
// shrinks back holds each word once: it used to print the top of the
// live region again at every resize.
func TestChatResizeMidStreamWordsOnce(t *testing.T) {
	t.Parallel()
	answer, words := termvt.Numbered(600)
	screen := streamWithResizes(t, answer, 6, 12, func(s string) bool { return strings.Contains(s, "w60 ") })
	assertWordsOnce(t, screen, words)
	assertNoStatusLine(t, screen)
}

// The slow scenario's ticks, streamed across resizes, are all there once.
func TestChatResizeSlowTicks(t *testing.T) {
	t.Parallel()
	const ticks = 600
	answer := strings.TrimSpace(strings.Repeat("tick ", ticks))
	screen := streamWithResizes(t, answer, 5, 10, func(s string) bool { return strings.Count(s, "tick") > 40 })
	if n := len(regexp.MustCompile(`\btick\b`).FindAllString(screen, -1)); n != ticks {
		t.Fatalf("%d ticks on the screen, want %d:\n%s", n, ticks, tailOf(screen, 3000))
	}
	assertNoStatusLine(t, screen)
}

// typedChat streams a 600-word answer slowly and answers the next request
// with "ok, noted".
func typedChat(t *testing.T) (*tmuxChat, int) {
	answer, words := termvt.Numbered(600)
	js, _ := json.Marshal(answer)
	url := inlineServer(t, fmt.Sprintf(`{"name":"typed","responses":[{"text":%s,"chunk_size":6,"chunk_delay_ms":12},{"text":"ok, noted"}]}`, js)).URL
	c := startTmuxChat(t, url, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "go on", "Enter")
	c.waitFor("the stream to start", 20*time.Second, func(s string) bool { return strings.Contains(s, "w60 ") })
	return c, words
}

// A message typed while an answer streams leaves the answer one block:
// no dead status line, no notice in the middle of it; the message is
// said queued below the answer and delivered after it.
func TestChatTypedDuringAnswerKeepsItWhole(t *testing.T) {
	t.Parallel()
	c, words := typedChat(t)
	c.tmux("send-keys", "also this", "Enter")
	c.waitFor("the second answer", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "ok, noted") && idlePrompt.MatchString(s)
	})
	time.Sleep(200 * time.Millisecond)
	screen := c.screen()
	assertWordsOnce(t, screen, words)
	assertNoStatusLine(t, screen)
	// Every row from the answer's first word to its last holds words of
	// the answer only.
	first, last := strings.Index(screen, "w0 "), strings.Index(screen, fmt.Sprintf("w%d", words-1))
	for _, row := range strings.Split(screen[first:last], "\n") {
		if strings.TrimSpace(row) != "" && !regexp.MustCompile(`^\s*(w[0-9]+\s*)+$`).MatchString(row) {
			t.Fatalf("the answer is cut by %q:\n%s", row, tailOf(screen, 4000))
		}
	}
	if !strings.Contains(screen[last:], "queued") || !strings.Contains(screen[last:], "also this") {
		t.Fatalf("the queued message is not said below the answer:\n%s", tailOf(screen, 2000))
	}
}

// Ctrl-C with a message queued stops the answer and puts the message back
// into the prompt, where Enter sends it; it used to be thrown away ("not
// delivered: …").
func TestChatStopPutsQueuedBack(t *testing.T) {
	t.Parallel()
	c, _ := typedChat(t)
	c.tmux("send-keys", "keep me", "Enter")
	time.Sleep(300 * time.Millisecond)
	c.tmux("send-keys", "C-c")
	c.waitFor("the message back in the prompt", 20*time.Second, func(s string) bool {
		return regexp.MustCompile(`(?m)^ralph> keep me\s*$`).MatchString(s)
	})
	screen := c.screen()
	assertNoStatusLine(t, screen)
	if !strings.Contains(screen, "stopped: ") {
		t.Fatalf("no stop reported:\n%s", tailOf(screen, 2000))
	}
}
