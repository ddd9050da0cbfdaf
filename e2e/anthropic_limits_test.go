package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A rate limit in Anthropic's shape enters ralph's limit wait: with
// retry-after, and with only the anthropic-ratelimit-*-reset headers (RFC
// 3339 times, not seconds), ralph waits until the reset and the retry is
// answered.
func TestAnthropicRateLimitWaits(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"anthropic", "anthropic_reset"} {
		t.Run(shape, func(t *testing.T) {
			srv := anthropicServer(t, `{"rate_limit":{"shape":"`+shape+`","reset_s":2}},{"text":"Answered after the limit."}`)
			r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "json", "say hi")
			reqs := srv.Requests()
			if got := resultLine(t, r.stdout)["result"]; got != "Answered after the limit." || len(reqs) != 2 {
				t.Fatalf("result %q after %d requests", got, len(reqs))
			}
			// The reset is whole seconds (RFC 3339), so it comes between
			// one and two seconds after the first request.
			if waited := reqs[1].Received.Sub(reqs[0].Received); waited < 900*time.Millisecond {
				t.Fatalf("the retry came %s after the limit, before its reset", waited)
			}
		})
	}
}

// "prompt is too long" (the Messages API's 400) compacts the conversation
// and tries once more, as OpenAI's context-length error does.
func TestAnthropicPromptTooLongCompacts(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"text":"Noted: the code word is PELICAN."},
		{"status":400,"message":"prompt is too long: 208425 tokens > 200000 maximum"},
		{"text":"## Decisions\n- The person chose a code word, a large sea bird, to be kept for later.\n## Files\nnone\n## Open questions\nnone\n## What is next\n- Answer the next question."},
		{"text":"Answered after the compaction."}`)
	dir := t.TempDir()
	env := anthropicEnv(t)
	anthropicRun(t, dir, env, srv, "remember the word PELICAN")
	r := ralph(t, dir, env, nil, anthropicArgs(srv, "-c", "what word did I ask you to remember?")...)
	if r.code != 0 || !strings.Contains(r.stdout, "Answered after the compaction.") || strings.Count(r.stderr, "compacted it") != 1 {
		t.Fatalf("-c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (answer, refusal, summary, retry)", len(reqs))
	}
	if retry := string(reqs[3].Body); strings.Contains(retry, "remember the word PELICAN") || !strings.Contains(retry, "what word did I ask you to remember?") {
		t.Fatalf("the retried request is not the summary and the message:\n%s", retry)
	}
}

// A refusal stop reason (HTTP 200, stop_reason "refusal") ends the
// one-shot as a failure in one sentence, keeps the partial answer and
// sets the message aside: `ralph -c` does not send it again.
func TestAnthropicRefusalStopReason(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"text":"I can't help with","finish_reason":"refusal"},{"text":"Glad to help with that."}`)
	dir := t.TempDir()
	env := anthropicEnv(t)
	r := ralph(t, dir, env, nil, anthropicArgs(srv, "the message the model refuses")...)
	if r.code == 0 {
		t.Fatalf("a refused answer exited 0\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	oneSentence(t, r.stderr, "set aside")
	r = anthropicRun(t, dir, env, srv, "-c", "an unrelated message")
	if !strings.Contains(r.stdout, "Glad to help with that.") {
		t.Fatalf("stdout: %s", r.stdout)
	}
	if body := string(srv.Requests()[1].Body); strings.Contains(body, "the message the model refuses") {
		t.Fatalf("ralph -c sent the refused message again:\n%s", body)
	}
}

// `ralph models` lists what the Messages API's model list names, read in
// Anthropic's shape.
func TestAnthropicModelsList(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"models","api_key":"`+anthropicKey+`","served":["claude-sonnet-4-5-20250929","claude-opus-4-1"],"responses":[{"text":"unused"}]}`)
	r := ralph(t, t.TempDir(), anthropicEnv(t), nil, anthropicArgs(srv, "models")...)
	if r.code != 0 || !strings.Contains(r.stdout, "claude-opus-4-1") || !strings.Contains(r.stdout, "claude-sonnet-4-5-20250929") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// The Anthropic key ralph uses (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN)
// never reaches the model's commands, in the default sandbox and in the
// fallback: a command that prints them and dumps its environment into the
// project finds neither, and no request body carries the key (it goes out
// only in its header).
func TestAnthropicKeyKeptFromCommands(t *testing.T) {
	t.Parallel()
	const payload = `echo "key=[$ANTHROPIC_API_KEY] token=[$ANTHROPIC_AUTH_TOKEN]"; env > env.txt`
	for _, mode := range sandboxModes {
		for _, variable := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
			t.Run(mode.name+"/"+variable, func(t *testing.T) {
				proj, home := attackLayout(t)
				srv := anthropicServer(t, `{"tool_calls":[{"name":"run_command","arguments":`+jsonString(`{"command":`+jsonString(payload)+`}`)+`}]},{"text":"done"}`)
				env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp")}, gitEnv...)
				env = append(env, mode.env...)
				var all []string
				for _, kv := range anthropicEnv(t, env...) {
					if variable == "ANTHROPIC_AUTH_TOKEN" && strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
						continue
					}
					all = append(all, kv)
				}
				if variable == "ANTHROPIC_AUTH_TOKEN" {
					all = append(all, "ANTHROPIC_AUTH_TOKEN="+anthropicKey)
				}
				anthropicRun(t, proj, all, srv, "-y", "print the key")
				dump := readFileT(t, filepath.Join(proj, "env.txt"))
				if strings.Contains(dump, anthropicKey) || strings.Contains(dump, variable+"=") {
					t.Fatalf("the command's environment holds the key:\n%s", dump)
				}
				reqs := srv.Requests()
				if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "key=[] token=[]") {
					t.Fatalf("%d requests; the command's output did not come back empty-handed:\n%s", len(reqs), reqs[len(reqs)-1].Body)
				}
				for _, req := range reqs {
					if strings.Contains(string(req.Body), anthropicKey) {
						t.Fatalf("request %d's body carries the key", req.Index)
					}
				}
			})
		}
	}
}

// A turn the API paused (stop_reason pause_turn) is sent back as it is,
// the paused assistant turn last, and the answer goes on from it: the
// result is both parts. A paused text that ends in whitespace goes back
// without it, as the API refuses a final assistant message that ends in
// whitespace ("final assistant content cannot end with trailing
// whitespace"), while the result keeps the answer's own text.
func TestAnthropicPauseTurnContinues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, paused, sentBack string }{
		{"plain", "Searching first.", "Searching first."},
		{"ending in a space", "Searching first. ", "Searching first."},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := anthropicServer(t, `{"text":"`+c.paused+`","finish_reason":"pause_turn"},{"text":" Then the answer."}`)
			r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "json", "look it up")
			if got, _ := resultLine(t, r.stdout)["result"].(string); !strings.HasPrefix(got, "Searching first.") || !strings.HasSuffix(got, " Then the answer.") {
				t.Fatalf("result %q", got)
			}
			sent := messagesSent(t, srv, false)
			if len(sent) != 2 {
				t.Fatalf("%d requests, want 2", len(sent))
			}
			last := message(t, sent[1].Messages[len(sent[1].Messages)-1])
			if last.Role != "assistant" || last.Content[len(last.Content)-1].Text != c.sentBack {
				t.Fatalf("the paused turn did not go back last as %q: %+v", c.sentBack, last)
			}
		})
	}
}

// A stream cut before message_stop (the connection ends mid-answer) is
// retried like an overload, and the answer is the retried one.
func TestAnthropicCutStreamRetried(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"text":"cut off mid","truncate":true},{"text":"The full answer."}`)
	r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "json", "say hi")
	if got := resultLine(t, r.stdout)["result"]; got != "The full answer." || len(srv.Requests()) != 2 {
		t.Fatalf("result %q after %d requests", got, len(srv.Requests()))
	}
}
