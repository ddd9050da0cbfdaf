package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkOneShotHooks: what hooks cost a one-shot (issue 59). The same
// 3-turn one-shot as BenchmarkOneShotOverhead (a write, a read, an
// answer) runs without hooks and with a PreToolUse hook on every tool (a
// shell script that exits 0, the person's own in ~/.claude/settings.json,
// so in the sandbox), taking turns. It reports ralph's own time in each
// (the stand-in model's time taken out), the hook run's share per call
// (the paired difference over the two calls), the same per call for the
// hook in the person's ralph config with sandbox = false, and the
// script's own run time started outside ralph, for comparison: a hook
// should add its own run (in the sandbox: a sandboxed start) and nothing
// else.
// When RALPH_BENCH_BEFORE names a ralph binary of the previous release,
// the one-shot without hooks is paired with it too and none/before is
// their ratio (target ≤ 1.02x: hooks cost nothing when none is
// configured), in wall time and in CPU time (cpu-none/before), which
// other work on the machine disturbs less. Ratios are medians of each pair's, as in
// BenchmarkOneShotCheckpoints.
func BenchmarkOneShotHooks(b *testing.B) {
	srv := inlineServer(b, `{"name":"three_turns_loop","loop":true,"responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"alpha\\n\"}"}]},
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"text":"all done"}]}`)
	plain := cleanEnv(b)
	hooked := cleanEnv(b)
	// cleanEnv gives every call of one benchmark the same home: the
	// hooked runs get one of their own.
	home := b.TempDir()
	hooked = append(hooked, "HOME="+home)
	script := filepath.Join(b.TempDir(), "pass.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		b.Fatal(err)
	}
	settings := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":` + quoteJSON(script) + `}]}]}}`
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		b.Fatal(err)
	}
	// The same hook from the person's ralph config with sandbox = false:
	// what firing it costs beside its own run, with no sandbox to start.
	outsideConfig := b.TempDir()
	outside := append(cleanEnv(b), "XDG_CONFIG_HOME="+outsideConfig)
	if err := os.MkdirAll(filepath.Join(outsideConfig, "ralph"), 0o755); err != nil {
		b.Fatal(err)
	}
	toml := "[[hooks.PreToolUse]]\nmatcher = \"*\"\nhooks = [{ type = \"command\", command = " + quoteJSON(script) + ", sandbox = false }]\n"
	if err := os.WriteFile(filepath.Join(outsideConfig, "ralph", "config.toml"), []byte(toml), 0o644); err != nil {
		b.Fatal(err)
	}
	before := os.Getenv("RALPH_BENCH_BEFORE")
	// cpu is the CPU time of each binary's runs without hooks, which a
	// machine shared with other work disturbs less than wall time.
	cpu := map[string][]time.Duration{}
	run := func(bin string, env []string) time.Duration {
		plainRun := len(env) == len(plain) && &env[0] == &plain[0]
		dir := b.TempDir()
		t0 := srv.ServerTime()
		start := time.Now()
		cmd := exec.Command(bin, "--base-url", srv.URL, "--json", "go")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		if plainRun {
			cpu[bin] = append(cpu[bin], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		return time.Since(start) - (srv.ServerTime() - t0)
	}
	n := trials(b, 30)
	var none, pre, out, old, alone []time.Duration
	var perHook, perOutside, hookRatio, beforeRatio []float64
	for i := 0; i < n; i++ {
		// Which goes first alternates, so that drift in the machine's
		// load falls on both alike.
		var a, h, u, o time.Duration
		order := []func(){func() { a = run(ralphBin, plain) }, func() { h = run(ralphBin, hooked) }, func() { u = run(ralphBin, outside) }}
		if before != "" {
			order = append(order, func() { o = run(before, plain) })
		}
		for j := range order {
			order[(i+j)%len(order)]()
		}
		none, pre = append(none, a), append(pre, h)
		hookRatio = append(hookRatio, float64(h)/float64(a))
		perHook = append(perHook, ms(h-a)/2)
		out = append(out, u)
		perOutside = append(perOutside, ms(u-a)/2)
		if before != "" {
			old = append(old, o)
			beforeRatio = append(beforeRatio, float64(a)/float64(o))
		}
		t0 := time.Now()
		if out, err := exec.Command(script).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		alone = append(alone, time.Since(t0))
	}
	b.ReportMetric(ms(percentile(none, 0.5)), "none-median-ms")
	b.ReportMetric(ms(percentile(pre, 0.5)), "pretool-median-ms")
	b.ReportMetric(median(hookRatio), "pretool/none")
	b.ReportMetric(median(perHook), "ms/hook-call")
	b.ReportMetric(ms(percentile(out, 0.5)), "outside-median-ms")
	b.ReportMetric(median(perOutside), "ms/outside-hook-call")
	b.ReportMetric(ms(percentile(alone, 0.5)), "hook-alone-ms")
	if before != "" {
		b.ReportMetric(ms(percentile(old, 0.5)), "before-median-ms")
		b.ReportMetric(median(beforeRatio), "none/before")
		b.ReportMetric(float64(percentile(cpu[ralphBin], 0.5))/float64(percentile(cpu[before], 0.5)), "cpu-none/before")
	}
}

// median is the middle of xs.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
