package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/remote"
)

// BenchmarkControlStop: a stop from another process, against a headless
// one-shot ralph waiting on its model, to "state saved" (the running
// ralph's session.json says interrupted), p99 over 30 trials each way:
//
//   - p99-ms: from the start of a `ralph stop` process, which pays the
//     ~30 ms of start-up glamour's highlighter costs every ralph process
//     (target: < 50+30 ms, as the other start-up targets count it);
//   - socket-p99-ms: from sending the same request on the control socket
//     from a process already running, which is the running ralph's own
//     part (target: < 50 ms). The socket is the one the run made: it
//     lives in the run's runtime or state directory, which its
//     environment names (cleanEnv's, not this process's), so this
//     process's own lookup (control.Call) would find none;
//   - exit-p99-ms: from the start of `ralph stop` until the stopped
//     ralph has exited, with 130.
func BenchmarkControlStop(b *testing.B) {
	srv := inlineServer(b, `{"name":"stall","loop":true,"responses":[{"text":"thinking","stall":true}]}`)
	env := cleanEnv(b)
	n := trials(b, 30)
	var saved, exited, socket []time.Duration
	for i := 0; i < 2*n; i++ {
		viaProcess := i%2 == 0
		dir := b.TempDir()
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--json", "think")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		waitFor(b, "the run to wait on its model", 10*time.Second, func() bool {
			fi, err := os.Stat(socketPath(dir, env))
			return err == nil && fi.Mode()&os.ModeSocket != 0 && srv.Active() == 1
		})
		start := time.Now()
		if viaProcess {
			stop := exec.Command(ralphBin, "stop")
			stop.Dir, stop.Env = dir, env
			if out, err := stop.CombinedOutput(); err != nil {
				b.Fatalf("ralph stop: %v: %s", err, out)
			}
		} else if r, err := control.CallPeer(context.Background(), control.Peer{Path: socketPath(dir, env)}, control.Request{Op: remote.OpStop}); err != nil || !r.OK {
			b.Fatalf("stop through the socket: %+v %v", r, err)
		}
		took := waitInterrupted(b, filepath.Join(dir, ".ralph", "session.json"), start)
		if viaProcess {
			saved = append(saved, took)
		} else {
			socket = append(socket, took)
		}
		select {
		case <-done:
			if viaProcess {
				exited = append(exited, time.Since(start))
			}
		case <-time.After(10 * time.Second):
			b.Fatal("the stopped ralph did not exit")
		}
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			b.Fatalf("the stopped ralph exited %d, want 130", code)
		}
		waitFor(b, "the model request to end", 10*time.Second, func() bool { return srv.Active() == 0 })
	}
	b.ReportMetric(ms(percentile(saved, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(saved, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(socket, 0.5)), "socket-median-ms")
	b.ReportMetric(ms(percentile(socket, 0.99)), "socket-p99-ms")
	b.ReportMetric(ms(percentile(exited, 0.99)), "exit-p99-ms")
}

// waitInterrupted polls session.json until it says interrupted and
// returns the time since start.
func waitInterrupted(b *testing.B, path string, start time.Time) time.Duration {
	deadline := start.Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), `"status": "interrupted"`) {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			b.Fatalf("session.json never said interrupted: %s", data)
		}
		time.Sleep(200 * time.Microsecond)
	}
}
