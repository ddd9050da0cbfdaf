package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/spf13/afero"
)

// background keeps the `ralph run` processes the server started, so that
// each is waited for (no zombie) and its early exit is seen. Everything
// else about a run (is it running, stop it, tell it something) goes
// through the project's lock and control socket, as for a run a person
// started: a run outlives the server, and a new server finds it again.
type background struct {
	mu   sync.Mutex
	runs map[int]*startedRun
}

type startedRun struct {
	done chan struct{}
	code int
	log  string
}

func newBackground() *background { return &background{runs: map[int]*startedRun{}} }

// readyLimit is how long a started run may take to hold the project's
// lock and listen on its control socket.
const readyLimit = 60 * time.Second

// start runs `ralph -C dir run args...` in a session of its own, its
// output in a log file, and returns its pid once it holds the project's
// lock and listens on the control socket; a run that exits before is an
// error with its own sentence.
func (b *background) start(ctx context.Context, bin, dir, root string, env []string, args []string) (RunStarted, error) {
	f, err := os.CreateTemp("", "ralph-mcp-run-*.log")
	if err != nil {
		return RunStarted{}, fmt.Errorf("creating the run's log: %w", err)
	}
	defer f.Close()
	cmd := exec.Command(bin, append([]string{"-C", dir, "run"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = f, f
	// A session of its own: the run does not end with the client that
	// started the server, nor take its signals.
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return RunStarted{}, fmt.Errorf("starting ralph run: %w", err)
	}
	r := &startedRun{done: make(chan struct{}), log: f.Name()}
	b.mu.Lock()
	b.runs[cmd.Process.Pid] = r
	b.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
		close(r.done)
	}()
	deadline := time.NewTimer(readyLimit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	fs := afero.NewOsFs()
	started := RunStarted{Dir: root, PID: cmd.Process.Pid, Log: r.log}
	for {
		select {
		case <-r.done:
			out, _ := os.ReadFile(r.log)
			o := outcome{stderr: out, code: r.code}
			return RunStarted{}, fmt.Errorf("ralph run exited (code %d) before it started: %s", r.code, o.sentence())
		case <-ctx.Done():
			return started, fmt.Errorf("ralph run (pid %d) was started, but the call ended before it was ready: %w", cmd.Process.Pid, ctx.Err())
		case <-deadline.C:
			return started, fmt.Errorf("ralph run (pid %d) did not take the project within %s; its output is in %s", cmd.Process.Pid, readyLimit, r.log)
		case <-tick.C:
			info, state, _ := memory.ReadLock(fs, root)
			if state == memory.LockHeld && info.PID == cmd.Process.Pid && listening(root) {
				started.SessionID = info.SessionID
				return started, nil
			}
		}
	}
}

// listening says the control socket of the ralph in root exists. A
// connection made once it does waits in the listener's backlog until the
// run accepts it, so a stop sent at once is not lost.
func listening(root string) bool {
	_, err := os.Stat(control.SocketPath(root))
	return !errors.Is(err, os.ErrNotExist)
}
