package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestOneLineForAToolCall: the same tool call reads the same wherever a
// person meets it — the chat's lines above the approval question, the
// question's own line in chat (what a hard stop says it waited on), the
// one-shot progress on stderr, `ralph watch` and `ralph logs` — because
// every face takes it from coordinator/eventwords. Each row is one face and the
// line the model's calls must show there.
func TestOneLineForAToolCall(t *testing.T) {
	t.Parallel()
	const (
		command = "echo ran > ran.txt"
		ran     = "running `" + command + "`"
		read    = "read_file notes/plan.md"
	)
	calls := [][]toolCall{
		{{name: "read_file", args: `{"path":"notes/plan.md"}`}},
		{{name: "run_command", args: `{"command":"` + command + `"}`}},
	}
	scenario := toolScenario(t, "one line", calls, "All done.")

	// Chat on a terminal, asked about the command: the tool lines above
	// the question, then a hard stop while it waits says what it waited
	// for. A watch from another terminal shows the same call meanwhile.
	chatDir := t.TempDir()
	mustWrite(t, chatDir+"/notes/plan.md", "the plan\n")
	env := chatEnv(t)
	srv := inlineServer(t, scenario)
	chat := startPTY(t, chatDir, env, "chat", "--base-url", srv.URL)
	chat.waitIdle(10*time.Second, nil)
	chat.typeKeys("go\r")
	chat.waitFor("run `"+command+"`? [y]es / [n]o / [t]ell it why not / [a]lways", 10*time.Second)
	waitSocket(t, chatDir, env)
	watch := startPTY(t, chatDir, env, "watch")
	// A frame reaches the terminal in more than one write: wait for the
	// events under the header too, not only the header's question (CI
	// once caught a frame cut off after it).
	watch.waitFor("question  #1", 10*time.Second)
	watch.waitFor("• "+ran, 10*time.Second)
	watchScreen := watch.screen()
	chatScreen := chat.screen()
	chat.typeKeys("\x03")
	chat.waitFor("stopped: ", 10*time.Second)
	stopped := chat.screen()
	chat.waitIdle(10*time.Second, nil)
	chat.leave(0, 10*time.Second)
	watch.expectExit(0, 10*time.Second) // the watch ends with the session
	logs := ralph(t, chatDir, env, nil, "logs")
	if logs.code != 0 {
		t.Fatalf("ralph logs: exit %d %s", logs.code, logs.stderr)
	}

	// One-shot on a terminal with --yes: the progress lines on stderr.
	oneDir := t.TempDir()
	mustWrite(t, oneDir+"/notes/plan.md", "the plan\n")
	one := startPTY(t, oneDir, env, "-y", "--base-url", inlineServer(t, scenario).URL, "go")
	one.expectExit(0, 20*time.Second)
	oneShot := one.out.Since(0)

	for _, row := range []struct {
		face, shown string
		want        []string
	}{
		// The command asked about is not shown running before it is
		// allowed: the question shows it (checked below).
		{"chat, above the question", chatScreen, []string{"• " + read, "run `" + command + "`?"}},
		{"chat, the question waited on", stopped, []string{"stopped: waiting for your answer: " + ran}},
		{"one-shot progress", oneShot, []string{"• " + read, "• " + ran}},
		{"ralph watch", watchScreen, []string{"main   waiting for approval", "• " + ran}},
		{"ralph logs", logs.stdout, []string{read, ran}},
	} {
		for _, want := range row.want {
			if !strings.Contains(row.shown, want) {
				t.Errorf("%s does not show %q:\n%s", row.face, want, row.shown)
			}
		}
	}
	if strings.Contains(chatScreen, "• "+ran) {
		t.Errorf("chat showed the command running before it was allowed:\n%s", chatScreen)
	}
}
