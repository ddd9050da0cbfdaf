//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The commands people bring from other agents (issue 57, item 9): /model
// completes from and is checked against the endpoint's list through one
// resolver, /status is true of the open chat, /init writes AGENTS.md
// through the model, /resume picks a conversation, a built-in command
// wins over a custom one of the same name, and a paste folds as the same
// number of lines whichever way it arrives.

// modelsServer is the stand-in serving three models besides its own.
func modelsServer(t *testing.T, extra string) string {
	return inlineServer(t, `{"name":"models","loop":true,"served":["fake-large","fake-small","gpt-mini"]`+extra+`,"responses":[{"text":"ok"}]}`).URL
}

// Tab after /model lists the models the endpoint serves.
func TestChatModelTabCompletesFromTheEndpoint(t *testing.T) {
	t.Parallel()
	c := startTmuxChat(t, modelsServer(t, ""), 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "/model fake-", "Tab")
	time.Sleep(300 * time.Millisecond)
	c.tmux("send-keys", "Tab")
	c.waitFor("the served models offered", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "fake-large") && strings.Contains(s, "fake-small")
	})
	c.tmux("send-keys", "-l", "l")
	c.tmux("send-keys", "Tab")
	c.tmux("send-keys", "Enter")
	c.waitFor("the switch", 20*time.Second, func(s string) bool { return strings.Contains(s, "→ fake-large") })
}

// /model NAME is refused when the endpoint's list lacks it, naming the
// nearest; kept with a one-line warning when the list is empty or cannot
// be had (gateways often list nothing).
func TestChatModelCheckedAgainstTheList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, extra string
		refused     bool
	}{
		{"listed-without", "", true},
		{"empty-list", `,"served":["-"]`, false},
		{"list-fails", `,"models_status":503`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := modelsServer(t, "")
			if tc.extra != "" {
				url = inlineServer(t, `{"name":"models","loop":true`+tc.extra+`,"responses":[{"text":"ok"}]}`).URL
			}
			dir := t.TempDir()
			r := ralph(t, dir, cleanEnv(t), strings.NewReader("/model fake-larg\n/model\n"), "chat", "--base-url", url)
			out := r.stdout + r.stderr
			if tc.refused {
				if !strings.Contains(out, `does not serve a model named "fake-larg"`) || !strings.Contains(out, "nearest it lists: fake-large") {
					t.Fatalf("not refused with the nearest named:\n%s", out)
				}
				if strings.Contains(out, "→ fake-larg") || !strings.Contains(out, "model: fake-model") && !strings.Contains(out, "model: gpt") {
					t.Fatalf("the unknown name was taken:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "→ fake-larg") || !regexp.MustCompile(`warning: kept "fake-larg" unchecked`).MatchString(out) {
				t.Fatalf("not kept with a warning:\n%s", out)
			}
			if n := strings.Count(out, "unchecked"); n != 1 {
				t.Fatalf("%d warnings:\n%s", n, out)
			}
		})
	}
}

// /status in an open chat says the session is open, whose the lock is,
// and the model: it said "completed" and "lock free" of the chat it was
// typed in.
func TestChatStatusIsTrueOfTheOpenChat(t *testing.T) {
	t.Parallel()
	c := startTmuxChat(t, modelsServer(t, ""), 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "hello", "Enter")
	c.waitFor("the answer", 20*time.Second, func(s string) bool { return strings.Count(s, "ralph>") >= 2 && idlePrompt.MatchString(s) })
	c.tmux("send-keys", "/status", "Enter")
	c.waitFor("the status", 20*time.Second, func(s string) bool { return strings.Contains(s, "lock ") && strings.Count(s, "ralph>") >= 3 })
	s := c.screen()
	st := s[strings.LastIndex(s, "/status"):]
	for _, want := range []string{"open, idle at this chat's prompt", "let go while this chat waits at its prompt", "tokens"} {
		if !strings.Contains(st, want) {
			t.Fatalf("status lacks %q:\n%s", want, st)
		}
	}
	if regexp.MustCompile(`status\s+completed|lock\s+free|\nended\s`).MatchString(st) {
		t.Fatalf("status says the open chat is done:\n%s", st)
	}
}

// While an answer streams, /status says the chat is running and holds
// the lock.
func TestChatStatusWhileRunning(t *testing.T) {
	t.Parallel()
	url := inlineServer(t, `{"name":"slow","responses":[{"text":"`+strings.Repeat("word ", 300)+`","chunk_size":5,"chunk_delay_ms":30}]}`).URL
	c := startTmuxChat(t, url, 100, 30)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "go", "Enter")
	c.waitFor("the stream", 20*time.Second, func(s string) bool { return strings.Count(s, "word") > 10 })
	c.tmux("send-keys", "/status", "Enter")
	c.waitFor("the status", 30*time.Second, func(s string) bool { return strings.Contains(s, "held by this chat (pid ") })
	if s := c.screen(); !strings.Contains(s, "open, running (this chat") {
		t.Fatalf("not running:\n%s", tailOf(s, 3000))
	}
}

// A custom command file named like a built-in loses to it, with one
// warning a session naming the file; a custom command of its own name
// sends its text.
func TestChatBuiltinWinsOverCustomCommand(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"custom","loop":true,"responses":[{"text":"ok"}]}`)
	dir := t.TempDir()
	for path, body := range map[string]string{
		".claude/commands/status.md": "Say the word SHADOWED.\n",
		".ralph/commands/greet.md":   "---\ndescription: greet\n---\nGreet $ARGUMENTS warmly.\n",
	} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("/status\n/status\n/greet the team\n"), "chat", "--base-url", srv.URL)
	out := r.stdout + r.stderr
	if n := strings.Count(out, "warning: /status is ralph's own command; .claude/commands/status.md"); n != 1 {
		t.Fatalf("%d shadow warnings, want 1:\n%s", n, out)
	}
	if strings.Count(out, "project ") < 2 {
		t.Fatalf("the built-in /status did not run twice:\n%s", out)
	}
	var bodies []string
	for _, req := range srv.Requests() {
		bodies = append(bodies, string(req.Body))
	}
	all := strings.Join(bodies, "\n")
	if strings.Contains(all, "SHADOWED") {
		t.Fatalf("the shadowed file was sent to the model")
	}
	if !strings.Contains(all, "Greet the team warmly.") || strings.Contains(all, "description: greet") {
		t.Fatalf("the custom command was not sent as written:\n%s", all)
	}
}

// initScenario is the stand-in model answering /init: it writes name with
// the write tool, then says so.
func initScenario(t *testing.T, name, content string) string {
	args, _ := json.Marshal(map[string]string{"path": name, "content": content})
	return inlineServer(t, toolScenario(t, "init", [][]toolCall{{{"write_file", string(args)}}}, "wrote "+name)).URL
}

// /init has the model read the codebase and write AGENTS.md with the
// write tool; it answered "did you mean /exit?".
func TestChatInitWritesAgentsMD(t *testing.T) {
	t.Parallel()
	url := initScenario(t, "AGENTS.md", "# Agents\n\nBuild: go build ./...\n")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("/init\n"), "chat", "--base-url", url)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "AGENTS.md")); !strings.Contains(got, "Build: go build") {
		t.Fatalf("AGENTS.md = %q", got)
	}
}

// With only CLAUDE.md there, /init asks the model to update that one and
// to create no AGENTS.md.
func TestChatInitUpdatesClaudeMD(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, toolScenario(t, "init", [][]toolCall{{{"write_file", `{"path":"CLAUDE.md","content":"# Claude\n\nKeep this.\n\nTest: go test ./...\n"}`}}}, "updated CLAUDE.md"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("# Claude\n\nKeep this.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("/init\n"), "chat", "--base-url", srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "edit CLAUDE.md in place") {
		t.Fatalf("the model was not asked to update CLAUDE.md")
	}
	if got := readFileT(t, filepath.Join(dir, "CLAUDE.md")); !strings.Contains(got, "Test: go test") {
		t.Fatalf("CLAUDE.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTS.md")); err == nil {
		t.Fatal("AGENTS.md was created beside CLAUDE.md")
	}
}

// An AGENTS.md already there is written over only after the person says
// yes at the prompt; where nobody can be asked (piped), it is left.
func TestChatInitAsksBeforeOverwriting(t *testing.T) {
	t.Parallel()
	const old = "# Ours\n\nDo not lose this.\n"
	srv := inlineServer(t, toolScenario(t, "init", [][]toolCall{{{"write_file", `{"path":"AGENTS.md","content":"# Agents\n\nDo not lose this.\nBuild: make\n"}`}}}, "rewrote AGENTS.md"))
	dir := t.TempDir()
	agents := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(agents, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), strings.NewReader("/init\n"), "chat", "--base-url", srv.URL)
	if got := readFileT(t, agents); got != old || len(srv.Requests()) != 0 || !strings.Contains(r.stderr+r.stdout, "AGENTS.md exists") {
		t.Fatalf("piped /init did not leave AGENTS.md (%d requests, %q):\n%s%s", len(srv.Requests()), got, r.stdout, r.stderr)
	}

	c := startTmux(t, dir, nil, 100, 30, "chat", "--base-url", srv.URL)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "/init", "Enter")
	c.waitFor("the question", 20*time.Second, func(s string) bool { return strings.Contains(s, "AGENTS.md exists: have the model rewrite it") })
	c.tmux("send-keys", "-l", "n")
	c.waitFor("the refusal", 20*time.Second, func(s string) bool { return strings.Contains(s, "left as it is") })
	if got := readFileT(t, agents); got != old || len(srv.Requests()) != 0 {
		t.Fatalf("a no wrote AGENTS.md or asked the model (%d requests): %q", len(srv.Requests()), got)
	}
	c.tmux("send-keys", "/init", "Enter")
	c.waitFor("the question again", 20*time.Second, func(s string) bool { return strings.Count(s, "have the model rewrite it") >= 2 })
	c.tmux("send-keys", "-l", "y")
	c.waitFor("the rewrite", 30*time.Second, func(s string) bool { return strings.Contains(s, "rewrote AGENTS.md") })
	if got := readFileT(t, agents); !strings.Contains(got, "Build: make") {
		t.Fatalf("a yes did not rewrite AGENTS.md: %q\n%s", got, tailOf(c.screen(), 2000))
	}
}

// /resume lists the project's conversations as the --resume picker does
// (newest first, by first words), and /resume N goes on with one: the
// chat reopens it, and the next message continues that conversation. It
// resumed a paused task loop, and said there was none.
func TestChatResumePicksAConversation(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"resume","loop":true,"responses":[{"text":"noted"}]}`)
	dir := t.TempDir()
	for _, prompt := range []string{"first alpha", "second beta"} {
		if r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, prompt); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", prompt, r.code, r.stderr)
		}
	}
	c := startTmux(t, dir, nil, 100, 30, "chat", "--base-url", srv.URL)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "/resume", "Enter")
	c.waitFor("the list", 20*time.Second, func(s string) bool { return strings.Contains(s, "/resume N goes on") })
	s := c.screen()
	beta, alpha := strings.Index(s, " 1) second beta"), strings.Index(s, " 2) first alpha")
	if beta < 0 || alpha < beta {
		t.Fatalf("not listed newest first by first words:\n%s", tailOf(s, 2000))
	}
	before := len(srv.Requests())
	c.tmux("send-keys", "/resume 2", "Enter")
	c.waitFor("the reopened session", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "going on in session") && strings.Count(s, "· session ") >= 2 && idlePrompt.MatchString(s)
	})
	c.tmux("send-keys", "and then?", "Enter")
	waitFor(t, "the next request", 20*time.Second, func() bool { return len(srv.Requests()) > before })
	body := string(srv.Requests()[before].Body)
	if !strings.Contains(body, "first alpha") || strings.Contains(body, "second beta") || !strings.Contains(body, "and then?") {
		t.Fatalf("the message did not continue the picked conversation:\n%s", body)
	}
}

// A paste of five lines ending in a line break folds as its first line
// and four more, whether the terminal sends it with line feeds (bytes as
// a terminal emulator writes them) or tmux pastes a buffer piped into it
// (carriage returns); it folded as "5 more" one way and "4 more" another.
// The message sent is the five lines.
func TestChatPasteFoldsFiveLinesOneWay(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"paste","loop":true,"responses":[{"text":"got it"}]}`)
	c := startTmux(t, t.TempDir(), nil, 100, 30, "chat", "--base-url", srv.URL)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	const paste = "l1\nl2\nl3\nl4\nl5\n"
	// The terminal's own bytes: a bracketed paste with line feeds.
	hex := []string{"send-keys", "-H"}
	for _, b := range []byte("\x1b[200~" + paste + "\x1b[201~") {
		hex = append(hex, fmt.Sprintf("%02x", b))
	}
	c.tmux(hex...)
	c.waitFor("the first fold", 10*time.Second, func(s string) bool { return strings.Contains(s, "⟪l1") })
	// A buffer piped into tmux and pasted bracketed (line breaks as CR).
	load := exec.Command("tmux", "-S", c.sock, "load-buffer", "-")
	load.Stdin = strings.NewReader(paste)
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("load-buffer: %v\n%s", err, out)
	}
	c.tmux("paste-buffer", "-p")
	c.waitFor("the second fold", 10*time.Second, func(s string) bool { return strings.Count(s, "⟪l1") >= 2 })
	s := c.screen()
	if n := strings.Count(s, "⟪l1 … 4 more lines #"); n != 2 {
		t.Fatalf("%d folds say 4 more lines, want 2:\n%s", n, tailOf(s, 2000))
	}
	c.tmux("send-keys", "Enter")
	waitFor(t, "the request", 20*time.Second, func() bool { return len(srv.Requests()) > 0 })
	if body := string(srv.Requests()[0].Body); strings.Count(body, `l1\nl2\nl3\nl4\nl5`) != 2 {
		t.Fatalf("the pastes were not sent whole:\n%s", body)
	}
}

// Two messages queued while an answer streams go back into the prompt
// joined by a line break when Ctrl-C stops the answer, in the order typed,
// and Enter sends them as one message of two lines.
func TestChatStopPutsQueuedBackJoined(t *testing.T) {
	t.Parallel()
	c, _ := typedChat(t)
	c.tmux("send-keys", "keep me", "Enter")
	c.tmux("send-keys", "and me", "Enter")
	time.Sleep(300 * time.Millisecond)
	c.tmux("send-keys", "C-c")
	c.waitFor("both messages back in the prompt", 20*time.Second, func(s string) bool {
		return regexp.MustCompile(`(?m)^ralph> keep me␤and me\s*$`).MatchString(s)
	})
}
