package render

import (
	"strings"
	"testing"
)

// benchDoc is a typical answer of about 5 KB: headings, prose with inline
// markup, nested lists, code blocks and a table.
var benchDoc = strings.Repeat(`## Why the test is flaky

The failure comes from a **race** between the *worker pool* and the `+"`Close`"+` method,
which sometimes drops the last result before the channel is drained. See
[the race detector docs](https://go.dev/doc/articles/race_detector) for background.

### Steps to fix

1. Reproduce with `+"`go test -race -count=100 ./workers/`"+`.
2. Add a `+"`sync.WaitGroup`"+` so that `+"`Close`"+` waits for in-flight jobs:
   - increment it in `+"`Submit`"+`;
   - decrement it when a job finishes.
3. Re-run the tests and check the output.

`+"```go"+`
func (p *Pool) Close() {
	p.wg.Wait()
	close(p.results)
}
`+"```"+`

| Flag | Default | Effect |
|------|--------:|--------|
| `+"`-race`"+` | off | enables the race detector |
| `+"`-count`"+` | 1 | runs each test this many times |

> Note: the detector only finds races that actually happen during the run.

`, 6)

func BenchmarkMarkdown(b *testing.B) {
	for _, color := range []bool{false, true} {
		name := "plain"
		if color {
			name = "color"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(benchDoc)))
			b.ReportAllocs()
			for b.Loop() {
				Markdown(benchDoc, Options{Width: 80, Color: color})
			}
		})
	}
}

func TestBenchDocSize(t *testing.T) {
	if n := len(benchDoc); n < 4000 || n > 6000 {
		t.Errorf("benchDoc is %d bytes, want about 5 KB", n)
	}
}

// FuzzMarkdownNeverPanics calls render, not Markdown, because Markdown
// recovers from panics and would hide exactly what the fuzzer looks for.
func FuzzMarkdownNeverPanics(f *testing.F) {
	f.Add(benchDoc, 60, "dark")
	f.Add(hostileDoc, 20, "light")
	f.Add("| a |\n|---|\n| `x \\| y` |\n> - [ ] ~~z~~ <b>\n\x1b[31m\xff", 0, "notty")
	f.Fuzz(func(t *testing.T, md string, width int, style string) {
		opt := Options{Width: width, Color: true, Style: style}
		out, err := render(sanitize(stripControls(md)), opt)
		if err != nil {
			return
		}
		if !strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n") {
			t.Fatalf("output does not end with exactly one newline: %q", out)
		}
		if strings.ContainsRune(stripSGR(out), '\x1b') {
			t.Fatalf("output contains a non-SGR escape: %q", out)
		}
		if got := Markdown(md, opt); got != out && !tooCostly(sanitize(stripControls(md))) {
			t.Fatalf("Markdown and render disagree")
		}
	})
}
