package e2e

import (
	"bytes"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkOneShotVsCurl: `ralph "say hi"` in a fresh git repository with
// one commit, against the stand-in model, and one `curl -sN` making the
// same streamed chat-completions round trip to the same stand-in: what a
// script calling ralph pays over calling the endpoint itself, start-up,
// the first look at the repository and the session's records included
// (target: ralph/curl ≤ 2). The two take turns, which goes first
// alternating, and ralph/curl is the median of each pair's ratio: on a
// shared machine the load drifts within a run, and a ratio of the two
// medians would take that drift for ralph's. ralph-ms and curl-ms are
// each one's median.
func BenchmarkOneShotVsCurl(b *testing.B) {
	curl := needTool(b, "curl", "curl")
	srv := inlineServer(b, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
	env := cleanEnv(b, gitEnv...)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"say hi"}]}`
	timed := func(cmd *exec.Cmd, want string) time.Duration {
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || !strings.Contains(out.String(), want) {
			b.Fatalf("%s: %v %q", cmd.Args[0], err, out.String())
		}
		return d
	}
	n := trials(b, 30)
	ralphs, curls := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	ratios := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		repo := b.TempDir()
		setup := exec.Command("bash", "-c", `git init -q -b main && echo hi > README.md && git add -A && git commit -qm first`)
		setup.Dir, setup.Env = repo, env
		if out, err := setup.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		oneShot := func() time.Duration {
			cmd := exec.Command(ralphBin, "--base-url", srv.URL, "say hi")
			cmd.Dir, cmd.Env = repo, env
			return timed(cmd, "hi\n")
		}
		roundTrip := func() time.Duration {
			cmd := exec.Command(curl, "-sN", srv.URL+"/chat/completions", "-H", "Content-Type: application/json",
				"-H", "Authorization: Bearer x", "-d", body)
			cmd.Dir, cmd.Env = repo, env
			return timed(cmd, "[DONE]")
		}
		var r, c time.Duration
		if i%2 == 0 {
			r = oneShot()
			c = roundTrip()
		} else {
			c = roundTrip()
			r = oneShot()
		}
		ralphs, curls = append(ralphs, r), append(curls, c)
		ratios = append(ratios, float64(r)/float64(c))
	}
	sort.Float64s(ratios)
	b.ReportMetric(ms(percentile(ralphs, 0.5)), "ralph-ms")
	b.ReportMetric(ms(percentile(curls, 0.5)), "curl-ms")
	b.ReportMetric(ratios[n/2], "ralph/curl")
}

// BenchmarkOneShotResponsesVsChat: the same `ralph "say hi"` one-shot on
// OpenAI's Responses API (gpt-5-codex, which OpenAI serves only there)
// and on chat completions (gpt-4o-mini), against one stand-in, in pairs
// whose order alternates: what the Responses wire costs a one-shot over
// the chat wire, start-up, the first look at the repository and the
// session's records alike (target: ≤ 1.05). The stand-in sends the
// Responses API its reasoning item too, as a reasoning model's answer
// has one. responses/chat is the median of each pair's ratio.
func BenchmarkOneShotResponsesVsChat(b *testing.B) {
	srv := inlineServer(b, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
	env := cleanEnv(b, gitEnv...)
	n := trials(b, 50)
	resps, chats := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	ratios := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		repo := b.TempDir()
		setup := exec.Command("bash", "-c", `git init -q -b main && echo hi > README.md && git add -A && git commit -qm first`)
		setup.Dir, setup.Env = repo, env
		if out, err := setup.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		oneShot := func(model string) time.Duration {
			var out bytes.Buffer
			cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--model", model, "say hi")
			cmd.Dir, cmd.Env, cmd.Stdout = repo, env, &out
			start := time.Now()
			err := cmd.Run()
			d := time.Since(start)
			if err != nil || out.String() != "hi\n" {
				b.Fatalf("ralph --model %s: %v %q", model, err, out.String())
			}
			return d
		}
		var r, c time.Duration
		if i%2 == 0 {
			r, c = oneShot("gpt-5-codex"), oneShot("gpt-4o-mini")
		} else {
			c, r = oneShot("gpt-4o-mini"), oneShot("gpt-5-codex")
		}
		resps, chats = append(resps, r), append(chats, c)
		ratios = append(ratios, float64(r)/float64(c))
	}
	for _, req := range srv.Requests() {
		if req.Request.Model == "gpt-5-codex" && req.Path != "/v1/responses" {
			b.Fatalf("a gpt-5-codex request went to %s", req.Path)
		}
	}
	sort.Float64s(ratios)
	b.ReportMetric(ms(percentile(resps, 0.5)), "responses-ms")
	b.ReportMetric(ms(percentile(chats, 0.5)), "chat-ms")
	b.ReportMetric(ratios[n/2], "responses/chat")
}
