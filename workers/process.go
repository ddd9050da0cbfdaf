package workers

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Group is a long-lived program ralph starts for itself, such as an MCP
// server, in a process group of its own. It is started, killed and reaped
// exactly as run_command's commands are (see execute): the whole group
// dies with it, nothing it started outlives it, and if ralph is killed the
// kernel kills its leader.
type Group struct {
	ld   leader
	once sync.Once
	how  string
	code int
}

// StartGroup starts cmd in a new process group. cmd's SysProcAttr is
// replaced.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	cmd.SysProcAttr = procAttr()
	ld, err := startLocal(cmd)
	if err != nil {
		return nil, err
	}
	return &Group{ld: ld}, nil
}

// Pid is the leader's process id, which is also the group's id.
func (g *Group) Pid() int { return g.ld.pid() }

// Exited is closed when the leader has exited.
func (g *Group) Exited() <-chan struct{} { return g.ld.exited() }

// ExitCode is the leader's exit status once Stop returned: -1 when it was
// killed by a signal or its status is unknown. A hook's answer depends on
// it (workers/hooks), wherever the hook ran.
func (g *Group) ExitCode() int {
	g.Stop(0)
	return g.code
}

// Stop ends the whole group and says how its leader ended ("exited with
// status 2"). It sends SIGTERM to the group and waits up to grace for the
// leader to exit, then kills every member left with SIGKILL, reaps the
// leader and waits until no member is alive. A leader that exited by
// itself is reaped the same way, with what it left behind killed. Stop is
// safe to call more than once, from any goroutine; later calls return
// the first one's answer once it is done.
func (g *Group) Stop(grace time.Duration) string {
	g.once.Do(func() {
		pgid := g.ld.pid()
		// Until the leader is reaped its pid, and so -pgid, names only
		// this group.
		if grace > 0 {
			select {
			case <-g.ld.exited():
			default:
				_ = signalGroup(pgid, syscall.SIGTERM)
				select {
				case <-g.ld.exited():
				case <-time.After(grace):
				}
			}
		}
		ws, err := killAndReap(g.ld, pgid)
		g.code = -1
		switch {
		case err != nil:
			g.how = err.Error()
		case ws.Signaled():
			g.how = "was killed by signal " + ws.Signal().String()
		default:
			g.how = fmt.Sprintf("exited with status %d", ws.ExitStatus())
			g.code = ws.ExitStatus()
		}
	})
	return g.how
}
