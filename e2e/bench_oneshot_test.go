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
