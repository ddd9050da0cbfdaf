package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// slowLines is a long answer, streamed over several seconds so that a
// loaded machine still stops it halfway.
func slowLines() string {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "Line %d of a slowly streamed answer.\\n", i)
	}
	return b.String()
}

// A chat turn over the Messages API stopped mid-stream: Esc gives the
// prompt back with one "stopped:" line while the answer (or, with
// thinking on, the thinking) is still streaming, the request is cancelled,
// and the next message is answered: the stand-in, which checks requests as
// the API does, accepts what ralph keeps of the cut turn (no empty text
// block, no thinking block without its signature).
func TestAnthropicChatStopMidStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, first, seen string
		args              []string
	}{
		{"answer", `{"text":"` + slowLines() + `","chunk_size":16,"chunk_delay_ms":20}`, "Line 2 of", nil},
		{"thinking", `{"reasoning":"` + strings.ReplaceAll(slowLines(), "answer", "thought") + `","text":"never reached","chunk_delay_ms":40}`,
			"slowly streamed thought", []string{"--thinking-tokens", "1024"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := anthropicServer(t, c.first+`,{"text":"Understood: I stopped there."}`)
			args := anthropicArgs(srv, append([]string{"chat"}, c.args...)...)
			r := startPTY(t, t.TempDir(), anthropicEnv(t, "NO_COLOR=1", "TERM=xterm"), args...)
			r.waitIdle(10*time.Second, nil)
			r.typeKeys("tell me a long story\r")
			r.waitFor(c.seen, 10*time.Second)
			r.typeKeys("\x1b")
			r.waitIdle(5*time.Second, func(s string) bool { return strings.Contains(s, "stopped:") })
			screen := r.screen()
			if n := strings.Count(screen, "stopped:"); n != 1 || strings.Contains(screen, "Line 200 of") || strings.Contains(screen, "never reached") {
				t.Fatalf("%d stopped lines, or the stream was not cut:\n%s", n, screen)
			}
			r.typeKeys("go on, briefly\r")
			r.waitFor("Understood: I stopped there.", 10*time.Second)
			r.waitIdle(5*time.Second, nil)
			r.leave(0, 5*time.Second)
			srv.Close() // waits for the handlers, so the cancel is recorded
			reqs := srv.Requests()
			if len(reqs) != 2 || !reqs[0].Cancelled {
				t.Fatalf("%d requests; the first was cancelled: %v", len(reqs), len(reqs) > 0 && reqs[0].Cancelled)
			}
			sent := messagesSent(t, srv, false)[1]
			last := message(t, sent.Messages[len(sent.Messages)-1])
			if last.Role != "user" || !strings.Contains(last.Content[len(last.Content)-1].Text, "go on, briefly") {
				t.Fatalf("the next message went out as %+v", last)
			}
			for _, raw := range sent.Messages {
				for _, b := range message(t, raw).Content {
					if b.Type == "thinking" && b.Signature == "" {
						t.Fatalf("a cut thinking block went back without its signature: %s", raw)
					}
				}
			}
		})
	}
}
