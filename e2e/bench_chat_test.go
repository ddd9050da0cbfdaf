package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkChatHardStop: in one chat session, 30 hard stops (Ctrl-C
// written to the terminal → the idle prompt drawn again after the
// "stopped:" line), alternately while the coordinator streams an answer
// and while run_command runs `sleep 60` (target: p99 < 100 ms).
func BenchmarkChatHardStop(b *testing.B) {
	srv := scenarioServer(b, "chat_bench_stop")
	dir := b.TempDir()
	r := startPTY(b, dir, cleanEnv(b, "NO_COLOR=1", "TERM=xterm"), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	pidFile := filepath.Join(dir, "cmd.pid")
	n := trials(b, 30)
	var all, streaming, command []time.Duration
	for i := 0; i < n; i++ {
		_ = os.Remove(pidFile)
		off := r.out.Len()
		r.typeKeys("go on\r")
		if i%2 == 0 {
			if _, ok := r.out.waitRaw(off, 10*time.Second, func(raw, _ string) bool { return strings.Contains(raw, "Line 3 of") }); !ok {
				b.Fatalf("trial %d: no streamed answer:\n%s", i, r.screen())
			}
		} else {
			waitCommandPID(b, pidFile)
		}
		off = r.out.Len()
		pressed := time.Now()
		r.typeKeys("\x03")
		at, ok := r.out.waitRaw(off, 5*time.Second, func(raw, cursor string) bool {
			return strings.Contains(raw, "stopped:") && strings.HasPrefix(cursor, "ralph>")
		})
		if !ok {
			b.Fatalf("trial %d: the prompt did not come back:\n%s", i, r.screen())
		}
		d := at.Sub(pressed)
		all = append(all, d)
		if i%2 == 0 {
			streaming = append(streaming, d)
		} else {
			command = append(command, d)
		}
	}
	r.leave(0, 10*time.Second)
	b.ReportMetric(ms(percentile(all, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(all, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(streaming, 0.99)), "stream-p99-ms")
	b.ReportMetric(ms(percentile(command, 0.99)), "command-p99-ms")
}

// BenchmarkChatStartup: from exec to the idle prompt drawn and ready for
// typing, in a fresh project each time (target: median < 50 ms, plus the
// ~30 ms of start-up glamour's highlighter costs).
func BenchmarkChatStartup(b *testing.B) {
	srv := scenarioServer(b, "chat_hello")
	env := cleanEnv(b, "NO_COLOR=1", "TERM=xterm")
	n := trials(b, 20)
	var ds []time.Duration
	for i := 0; i < n; i++ {
		r := startPTY(b, b.TempDir(), env, "chat", "--base-url", srv.URL)
		at := r.waitIdle(10*time.Second, nil)
		ds = append(ds, at.Sub(r.started))
		r.leave(0, 10*time.Second)
	}
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.9)), "p90-ms")
}
