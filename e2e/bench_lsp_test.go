package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/config"
)

// BenchmarkEditGoLSP: what gopls costs the model's edits of a Go file
// (issue 91). Each trial runs one one-shot with gopls (a new ralph, so a
// new gopls: its first edit finds it cold, the second warm) and the same
// one-shot with the language servers off, taking turns, in a fresh copy of
// the same module; Go's build cache is shared by the trials, as a
// developer's is, and filled by a run before the first. An edit's time is
// its turn's: from the model's answer holding the call to the request
// carrying its result, which waits for the diagnostics. It reports the
// medians of the cold first edit, the warm second and the first and
// second edits without a server (a session's first edit costs more
// than its second with or without one), the paired ratios cold/none
// (first edits) and warm/none (second edits), the waits' bounds
// (the defaults: first-wait-bound-ms, lsp_first_wait, which holds the
// server's start; wait-bound-ms, lsp_wait) and how many cold edits gopls
// answered within the first (cold-answered, of 1).
func BenchmarkEditGoLSP(b *testing.B) {
	needTool(b, "gopls", "a language server e2e/setup.sh installs")
	srv := inlineServer(b, `{"name":"go_edits","loop":true,"responses":[
		{"tool_calls":[{"name":"edit_file","arguments":`+quoteJSON(editArgs("main.go", goBreak[0], goBreak[1]))+`}]},
		{"tool_calls":[{"name":"edit_file","arguments":`+quoteJSON(editArgs("main.go", goMend[0], goMend[1]))+`}]},
		{"text":"done"}]}`)
	// Go's build cache of every trial, in a directory of its own which
	// the person's config lets the sandbox's programs write, as
	// docs/editors.md tells a person to let gopls write theirs.
	goCache := realPath(b, b.TempDir())
	run := func(config string) (first, second time.Duration, result string) {
		proj, env := lspProject(b, srv.URL, goProject, fmt.Sprintf("sandbox_writable = [%q]\n", goCache)+config)
		env = append(env, "GOCACHE="+goCache)
		from := len(srv.Requests())
		r := ralph(b, proj, env, nil, "-y", "edit main.go")
		if r.code != 0 {
			b.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		reqs := srv.Requests()[from:]
		if len(reqs) != 3 {
			b.Fatalf("%d model requests, want 3", len(reqs))
		}
		msgs := reqs[1].Request.Messages
		return turnTime(reqs[0], reqs[1]), turnTime(reqs[1], reqs[2]), msgs[len(msgs)-1].Content
	}
	run(lspWaitConfig(lspContentWait, lspContentWait)) // fills Go's build cache
	n := trials(b, 8)
	var cold, warm, none, noneSecond []time.Duration
	var coldRatio, warmRatio []float64
	answered := 0
	for i := 0; i < n; i++ {
		var c, w, o, o2 time.Duration
		var result string
		order := []func(){
			func() { c, w, result = run("") },
			func() { o, o2, _ = run(lspOffConfig) },
		}
		for j := range order {
			order[(i+j)%len(order)]()
		}
		if strings.Contains(result, goUndefined) {
			answered++
		} else if !strings.Contains(result, "no answer within") {
			b.Fatalf("the cold edit's result has neither gopls's diagnostic nor the bound:\n%s", result)
		}
		cold, warm, none, noneSecond = append(cold, c), append(warm, w), append(none, o), append(noneSecond, o2)
		coldRatio = append(coldRatio, float64(c)/float64(o))
		warmRatio = append(warmRatio, float64(w)/float64(o2))
	}
	b.ReportMetric(ms(percentile(cold, 0.5)), "cold-median-ms")
	b.ReportMetric(ms(percentile(warm, 0.5)), "warm-median-ms")
	b.ReportMetric(ms(percentile(none, 0.5)), "none-median-ms")
	b.ReportMetric(ms(percentile(noneSecond, 0.5)), "none-second-median-ms")
	b.ReportMetric(median(coldRatio), "cold/none")
	b.ReportMetric(median(warmRatio), "warm/none")
	wait, first := config.LSP{}.Waits()
	b.ReportMetric(ms(first), "first-wait-bound-ms")
	b.ReportMetric(ms(wait), "wait-bound-ms")
	b.ReportMetric(float64(answered)/float64(n), "cold-answered")
}

// turnTime is the time of the tool turn between two model requests: from
// the end of the answer holding the call to the request with its result.
func turnTime(call, result llmtest.RecordedRequest) time.Duration {
	return result.Received.Sub(call.Received.Add(call.Served))
}
