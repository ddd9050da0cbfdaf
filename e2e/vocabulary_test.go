package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// vocabularyScenario is a run with a retry (the first request is turned
// away), a child agent whose model refuses it, a tool error (a file that
// is not there) and an answer.
const vocabularyScenario = `{"name":"vocabulary","responses":[
  {"status":429,"headers":{"Retry-After":"1"},"body":"{\"error\":{\"message\":\"Rate limit reached (fake)\"}}"},
  {"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\":\"inspect the parser\"}"},{"name":"read_file","arguments":"{\"path\":\"gone.go\"}"}]},
  {"status":400,"body":"{\"error\":{\"message\":\"the model refused this\"}}"},
  {"text":"All done."}]}`

// TestEveryFaceSaysTheSame (issue 50): a retry, a child agent that starts
// and fails, and a tool's error read the same, line for line, in the
// one-shot with --verbose, the one-shot's progress on a terminal, ralph
// logs, ralph watch and the chat. Before, the child started as "↳
// agent-1.1: …" in the one-shot and "↗ agent-1.1 started: …" in chat, and
// the retry was "attempt 1 failed, retrying in 1s: …" in logs and watch.
func TestEveryFaceSaysTheSame(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t)
	srv := inlineServer(t, vocabularyScenario)
	r := ralph(t, dir, env, nil, "--verbose", "--base-url", srv.URL, "look at the parser")
	if r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	// The lines the view made, as -v prints them.
	var lines []string
	for _, glyph := range []string{"↻ ", "↗ ", "↘ ", "  ✗ "} {
		found := ""
		for _, l := range strings.Split(r.stderr, "\n") {
			if s, ok := strings.CutPrefix(l, "ralph: "); ok && strings.HasPrefix(s, glyph) {
				found = s
				break
			}
		}
		if found == "" {
			t.Fatalf("-v has no %q line:\n%s", glyph, r.stderr)
		}
		lines = append(lines, found)
	}
	for _, want := range []string{"↻ attempt 1 failed: ", "↗ agent-1.1 started: inspect the parser", "↘ agent-1.1 failed: ", "  ✗ "} {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			t.Fatalf("-v lacks %q:\n%s", want, r.stderr)
		}
	}

	logs := ralph(t, dir, env, nil, "logs")
	watch := ralph(t, dir, env, nil, "watch")
	if logs.code != 0 || watch.code != 0 {
		t.Fatalf("ralph logs: exit %d %s; ralph watch: exit %d %s", logs.code, logs.stderr, watch.code, watch.stderr)
	}

	progress := startPTY(t, t.TempDir(), chatEnv(t), "--base-url", inlineServer(t, vocabularyScenario).URL, "look at the parser")
	if code := progress.exitCode(30 * time.Second); code != 0 {
		t.Fatalf("one-shot on a terminal: exit %d\n%s", code, progress.screen())
	}

	chat := startPTY(t, t.TempDir(), chatEnv(t), "chat", "--base-url", inlineServer(t, vocabularyScenario).URL)
	chat.waitIdle(10*time.Second, nil)
	chat.typeKeys("look at the parser\r")
	chat.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, "All done.") })
	chatScreen := chat.screen()
	chat.typeKeys("\x04")
	if code := chat.exitCode(10 * time.Second); code != 0 {
		t.Fatalf("chat: exit %d", code)
	}

	// Each run has its own stand-in model, on its own port.
	port := regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	for i, l := range lines {
		lines[i] = port.ReplaceAllString(l, "PORT")
	}
	for _, face := range []struct{ name, shown string }{
		{"ralph logs", logs.stdout},
		{"ralph watch", watch.stdout},
		{"the one-shot's progress", progress.screen()},
		{"chat", chatScreen},
	} {
		for _, want := range lines {
			// A terminal cuts a line to its width; the rest is the
			// same words.
			if len([]rune(want)) > 80 {
				want = string([]rune(want)[:80])
			}
			if !strings.Contains(port.ReplaceAllString(face.shown, "PORT"), want) {
				t.Errorf("%s does not say %q as -v does:\n%s", face.name, want, face.shown)
			}
		}
	}
}
