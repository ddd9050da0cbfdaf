package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkContinue401: `ralph -c hi` continuing a session of 401
// messages against the same one-shot continuing a session of 5, each
// answered by the same stand-in: what a long history adds to going on
// with it (target: long/short ≤ 1.2, issue 94; a request carries the
// whole history, so a little of the cost is the history's own). Both
// sessions are grown by ralph itself, one follow-up at a time, so their
// records are what a person's would be; before each run its project is
// put back as it was, so every long run continues 401 messages and every
// short one 5. The two take turns, which goes first alternating, and
// long/short is the median of each pair's ratio, as in OneShotVsCurl.
func BenchmarkContinue401(b *testing.B) {
	srv := inlineServer(b, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
	env := cleanEnv(b, gitEnv...)
	ralph := func(dir string, args ...string) time.Duration {
		var out bytes.Buffer
		cmd := exec.Command(ralphBin, append([]string{"--base-url", srv.URL}, args...)...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || !strings.Contains(out.String(), "hi\n") {
			b.Fatalf("ralph %s: %v %q", strings.Join(args, " "), err, out.String())
		}
		return d
	}
	shell := func(dir, script string) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", script, err, out)
		}
	}
	// grown is a project whose one session has 1 + 2*exchanges messages
	// (the system prompt, then a prompt and an answer an exchange), kept
	// aside as a pristine copy.
	top := b.TempDir()
	grown := func(name string, exchanges int) (dir, pristine string) {
		dir, pristine = filepath.Join(top, name), filepath.Join(top, name+".pristine")
		shell(top, "mkdir "+name+" && cd "+name+" && git init -q -b main && echo hi > README.md && git add -A && git commit -qm first")
		ralph(dir, "say hi")
		for i := 1; i < exchanges; i++ {
			ralph(dir, "-c", "say hi again")
		}
		shell(top, "cp -a "+name+" "+name+".pristine")
		return dir, pristine
	}
	long, longPristine := grown("long", 200)
	short, shortPristine := grown("short", 2)
	for dir, want := range map[string]string{long: "401", short: "5"} {
		var out bytes.Buffer
		cmd := exec.Command("bash", "-c", "cat .ralph/sessions/*/messages.jsonl | wc -l")
		cmd.Dir, cmd.Stdout = dir, &out
		if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != want {
			b.Fatalf("%s: the session has %q messages, want %s (%v)", dir, strings.TrimSpace(out.String()), want, err)
		}
	}
	// continued puts the project back as it was, untimed, then times one
	// follow-up.
	continued := func(dir, pristine string) time.Duration {
		shell(top, "rm -rf "+dir+" && cp -a "+pristine+" "+dir)
		return ralph(dir, "-c", "hi")
	}
	n := trials(b, 20)
	longs, shorts := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	ratios := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		var l, s time.Duration
		if i%2 == 0 {
			l = continued(long, longPristine)
			s = continued(short, shortPristine)
		} else {
			s = continued(short, shortPristine)
			l = continued(long, longPristine)
		}
		longs, shorts = append(longs, l), append(shorts, s)
		ratios = append(ratios, float64(l)/float64(s))
	}
	sort.Float64s(ratios)
	b.ReportMetric(ms(percentile(longs, 0.5)), "long-ms")
	b.ReportMetric(ms(percentile(shorts, 0.5)), "short-ms")
	b.ReportMetric(ratios[n/2], "long/short")
}
