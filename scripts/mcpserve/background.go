package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// readyLimit is how long a started run may take to hold the project's
// lock and listen on its control socket.
const readyLimit = 60 * time.Second

// startRun runs `ralph -C dir run args...` in a session of its own, its
// output in a log file, and returns its pid once it holds the project's
// lock and listens on the control socket; a run that exits before is an
// error with its own sentence. A goroutine waits for it, so it leaves no
// zombie while the server lives. Everything else about the run (is it
// running, stop it, tell it something) goes through the project's lock
// and control socket, as for a run a person started: a run outlives the
// server, and a new server finds it again.
func startRun(ctx context.Context, bin, dir, root string, env []string, args []string) (RunStarted, error) {
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
	done := make(chan struct{})
	code := 0
	go func() {
		_ = cmd.Wait()
		code = cmd.ProcessState.ExitCode()
		close(done)
	}()
	deadline := time.NewTimer(readyLimit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	fs, err := rootfs.New(root)
	if err != nil {
		return RunStarted{}, err
	}
	started := RunStarted{Dir: root, PID: cmd.Process.Pid, Log: f.Name()}
	for {
		select {
		case <-done:
			out, _ := os.ReadFile(f.Name())
			o := outcome{stderr: out, code: code}
			return RunStarted{}, fmt.Errorf("ralph run exited (code %d) before it started: %s", code, o.sentence())
		case <-ctx.Done():
			return started, fmt.Errorf("ralph run (pid %d) was started, but the call ended before it was ready: %w", cmd.Process.Pid, ctx.Err())
		case <-deadline.C:
			return started, fmt.Errorf("ralph run (pid %d) did not take the project within %s; its output is in %s", cmd.Process.Pid, readyLimit, f.Name())
		case <-tick.C:
			info, state, _ := memory.ReadLock(fs, root)
			if state == memory.LockHeld && info.PID == cmd.Process.Pid && listening(root, info.PID) {
				started.SessionID = info.SessionID
				return started, nil
			}
		}
	}
}

// listening says the control socket of the ralph of pid in root exists
// (each ralph has its own, control.SocketPathIn). A connection made once
// it does waits in the listener's backlog until the run accepts it, so a
// stop sent at once is not lost.
func listening(root string, pid int) bool {
	_, err := os.Stat(control.SocketPathIn(root, pid, os.Getenv))
	return !errors.Is(err, os.ErrNotExist)
}
