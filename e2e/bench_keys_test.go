package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// historyProject is a project whose input history holds n entries.
func historyProject(b *testing.B, n int) string {
	dir := b.TempDir()
	var h strings.Builder
	for i := range n {
		fmt.Fprintf(&h, "an earlier request number %d, about some file\n", i)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "history"), []byte(h.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkChatKeystroke10k: with 10,000 entries in the history, from
// chat's exec to the idle prompt, and from a key written to the terminal
// to the line showing it (40 keys; target: the cost of a key does not
// grow with the history).
func BenchmarkChatKeystroke10k(b *testing.B) {
	srv := scenarioServer(b, "chat_hello")
	env := cleanEnv(b, "NO_COLOR=1", "TERM=xterm")
	n := trials(b, 5)
	var start, keys []time.Duration
	for range n {
		r := startPTY(b, historyProject(b, 10000), env, "chat", "--base-url", srv.URL)
		at := r.waitIdle(20*time.Second, nil)
		start = append(start, at.Sub(r.started))
		typed := ""
		for i := range 40 {
			c := string(rune('a' + i%26))
			typed += c
			off := r.out.Len()
			pressed := time.Now()
			r.typeKeys(c)
			got, ok := r.out.waitRaw(off, 5*time.Second, func(_, cur string) bool { return strings.HasSuffix(cur, typed) })
			if !ok {
				b.Fatalf("key %d did not show:\n%s", i, r.screen())
			}
			keys = append(keys, got.Sub(pressed))
		}
		r.typeKeys("\x15") // Ctrl-U empties the line, so Ctrl-D leaves
		r.leave(0, 10*time.Second)
	}
	b.ReportMetric(ms(percentile(start, 0.5)), "start-ms")
	b.ReportMetric(ms(percentile(keys, 0.5)), "key-median-ms")
	b.ReportMetric(ms(percentile(keys, 0.99)), "key-p99-ms")
}

// BenchmarkChatPaste: a 200-line bracketed paste on the test terminal,
// from the paste written to the folded line shown (target: < 100 ms).
func BenchmarkChatPaste(b *testing.B) {
	srv := scenarioServer(b, "chat_hello")
	env := cleanEnv(b, "NO_COLOR=1", "TERM=xterm")
	var p strings.Builder
	for i := range 200 {
		fmt.Fprintf(&p, "panic: at frame %d in /src/project/pkg/file%d.go:%d\r\n", i, i, 10*i)
	}
	r := startPTY(b, b.TempDir(), env, "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	n := trials(b, 20)
	var ds []time.Duration
	for range n {
		off := r.out.Len()
		pasted := time.Now()
		r.typeKeys("\x1b[200~" + p.String() + "\x1b[201~")
		at, ok := r.out.waitRaw(off, 10*time.Second, func(_, cur string) bool { return strings.Contains(cur, "199 more lines") })
		if !ok {
			b.Fatalf("the paste did not show:\n%s", r.screen())
		}
		ds = append(ds, at.Sub(pasted))
		r.typeKeys("\x15") // Ctrl-U empties the line for the next paste
	}
	r.leave(0, 10*time.Second)
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.99)), "p99-ms")
}
