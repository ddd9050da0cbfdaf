package workers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/ralph-dev/ralph/workers/proctree"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// leader is the first process of a started command; its pid is the id of
// the command's process group. execute drives both kinds the same way:
// wait for exited, kill the group, reap.
type leader interface {
	pid() int
	// exited is closed when the leader has exited but is not reaped yet,
	// so its pid, the group's id, cannot have been reused.
	exited() <-chan struct{}
	// abandon is called when exited stays open after the group was
	// killed; it must make exited close.
	abandon()
	// wait reaps the leader and returns its wait status; the error says
	// why the status is unknown.
	wait() (syscall.WaitStatus, error)
}

// localLeader is a command ralph started itself.
type localLeader struct {
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	reaped  bool
}

func startLocal(cmd *exec.Cmd) (*localLeader, error) {
	// Not while an editor's call holds ralph's processes still (see
	// holdStill).
	started := proctree.Starting()
	err := cmd.Start()
	started()
	if err != nil {
		return nil, err
	}
	if err := joinGroup(cmd); err != nil {
		return nil, err
	}
	l := &localLeader{cmd: cmd, done: make(chan struct{})}
	trackLive(l.done)
	go func() {
		defer close(l.done)
		// If the platform cannot wait without reaping, reap here and keep
		// the result for wait; both are written before close(done).
		if err := waitExitedNoReap(cmd.Process.Pid); err != nil {
			l.waitErr, l.reaped = cmd.Wait(), true
		}
	}()
	return l, nil
}

func (l *localLeader) pid() int                { return l.cmd.Process.Pid }
func (l *localLeader) exited() <-chan struct{} { return l.done }

// abandon does nothing: a killed child of ralph's always exits, unless it
// is stuck in the kernel, and then there is nothing better to do than wait.
func (l *localLeader) abandon() {}

func (l *localLeader) wait() (syscall.WaitStatus, error) {
	err := l.waitErr
	if !l.reaped {
		err = l.cmd.Wait()
	}
	var exitErr *exec.ExitError
	if ps := l.cmd.ProcessState; ps != nil && (err == nil || errors.As(err, &exitErr)) {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			return ws, nil
		}
	}
	var unknown syscall.WaitStatus
	return unknown, err
}

// confinedLeader is a command started inside the sandbox by its helper.
type confinedLeader struct {
	p       *sandbox.Process
	outcome sandbox.Outcome
}

// startConfined starts cmd, as built for a local start, inside the
// sandbox, with out as its stdout and stderr; livesAcross marks a
// command that runs beside the next ones (sandbox.Command).
func (w *Workspace) startConfined(ctx context.Context, cmd *exec.Cmd, out *os.File, livesAcross bool) (*confinedLeader, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	p, err := w.start(ctx, sandbox.Command{
		Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Environ(),
		Stdout: out, Stderr: out, LivesAcrossCommands: livesAcross,
	})
	if err != nil {
		return nil, err
	}
	return &confinedLeader{p: p}, nil
}

func (c *confinedLeader) pid() int                { return c.p.Pid }
func (c *confinedLeader) exited() <-chan struct{} { return c.p.Exited() }
func (c *confinedLeader) abandon()                { c.p.Abandon() }

// wait keeps the sandbox's outcome for confined; an unknown status is
// reported there, so it is not an error here.
func (c *confinedLeader) wait() (syscall.WaitStatus, error) {
	ws, o := c.p.Wait()
	c.outcome = o
	return ws, nil
}

// joinGroup finishes putting the just-started cmd into a process group of
// its own where the platform needs a step after the start (see
// groupStarted); if it fails, the command is killed and reaped.
func joinGroup(cmd *exec.Cmd) error {
	if err := groupStarted(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	return nil
}
