package workers

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// This file is the process side of an external agent (see workers/agents):
// starting the CLI in its own process group with the prompt on stdin,
// stopping it gracefully, and making sure nothing it started outlives it.
// It lives here, beside run_command's process groups and the escaped
// process tracking it shares with them; what an agent's output means is the
// agents package's business.

// AgentProcess is one started agent: the parent's ends of its pipes and the
// goroutines that serve them. FinishAgent ends every goroutine it began.
type AgentProcess struct {
	cmd                           *exec.Cmd
	pgid                          int
	stdin                         *os.File // write end; the stdin goroutine closes it after the prompt
	stdout, stderr                *os.File // read ends
	stdinDone, exited, outputDone chan struct{}
	reaped                        bool   // the exited goroutine reaped the leader; written before exited closes
	token                         string // the value of agentTokenVar in the agent's environment
}

// AgentProcs are an agent's processes noted at one moment, to be killed
// later even if they have left its group by then.
type AgentProcs []procInfo

// StartAgent starts cmd in a new process group with three pipes and the
// goroutines that feed the prompt to stdin, pass stdout and stderr to
// onStdout and onStderr (each from its own goroutine, until end of file or
// a cut), and wait for the leader to exit. A random token in the
// environment marks every process the agent starts, wherever it goes (see
// escaped_linux.go). The child gets the pipes' *os.File ends directly, so
// os/exec starts no copying goroutines of its own that Wait could block on.
// cmd's SysProcAttr is replaced.
func StartAgent(cmd *exec.Cmd, prompt string, onStdout, onStderr func([]byte)) (*AgentProcess, error) {
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	cmd.Env = append(cmd.Env, agentTokenVar+"="+token)
	cmd.SysProcAttr = procAttr()
	var f [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(f[:2*i]...)
			return nil, err
		}
		f[2*i], f[2*i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f[0], f[3], f[5]
	started := proctree.Starting() // not while an editor's call holds (holdStill)
	err := cmd.Start()
	started()
	if err == nil {
		err = joinGroup(cmd)
	}
	closeFiles(f[0], f[3], f[5]) // only the child holds these ends now
	if err != nil {
		closeFiles(f[1], f[2], f[4])
		return nil, err
	}
	p := &AgentProcess{
		cmd: cmd, pgid: cmd.Process.Pid, token: token,
		stdin: f[1], stdout: f[2], stderr: f[4],
		stdinDone:  make(chan struct{}),
		exited:     make(chan struct{}),
		outputDone: make(chan struct{}),
	}
	trackLive(p.exited)

	go func() {
		defer close(p.stdinDone)
		// A write error means the agent exited or closed stdin without
		// reading all of the prompt; how it then ends tells the story.
		p.stdin.WriteString(prompt)
		p.stdin.Close() // end of file: the prompt is complete
	}()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		readAll(p.stdout, onStdout)
	}()
	go func() {
		defer readers.Done()
		readAll(p.stderr, onStderr)
	}()
	go func() {
		readers.Wait()
		close(p.outputDone)
	}()
	// exited closes when the leader has exited but is not yet reaped, so its
	// pid (the group id) cannot be reused before the group is killed. If the
	// platform cannot wait without reaping, the goroutine reaps it instead.
	go func() {
		defer close(p.exited)
		if err := waitExitedNoReap(p.pgid); err != nil {
			cmd.Wait() // the exit status is read from cmd.ProcessState
			p.reaped = true
		}
	}()
	return p, nil
}

// Exited is closed when the leader has exited.
func (p *AgentProcess) Exited() <-chan struct{} { return p.exited }

// OutputDone is closed when both stdout and stderr have been read to the
// end (or cut), after the last call of onStdout and onStderr.
func (p *AgentProcess) OutputDone() <-chan struct{} { return p.outputDone }

// ExitCode is the leader's exit status once FinishAgent has returned: -1
// when it was killed by a signal or did not exit.
func (p *AgentProcess) ExitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Stopping an agent is graceful first: claude and codex clean up their own
// children on SIGINT within a quarter of a second, which SIGKILL would deny
// them. Each signal goes to the whole group, and the next one follows if
// the agent has not exited after its wait. Whatever the agent leaves
// behind, in its group or not, FinishAgent kills.
var stopSteps = []struct {
	sig  syscall.Signal
	wait time.Duration
}{{syscall.SIGINT, 3 * time.Second}, {syscall.SIGTERM, 2 * time.Second}}

// Interrupt asks the agent to stop: SIGINT to its group, then SIGTERM,
// waiting after each for the agent to exit. FinishAgent sends SIGKILL.
func (p *AgentProcess) Interrupt() {
	for _, step := range stopSteps {
		// The leader is not reaped before FinishAgent, so -pgid names
		// only this agent's group.
		signalGroup(p.pgid, step.sig)
		t := time.NewTimer(step.wait)
		select {
		case <-p.exited:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Processes lists the agent's processes now: the leader, whatever carries
// its token, and their descendants.
func (p *AgentProcess) Processes() AgentProcs {
	leader, ok := readProc(p.pgid)
	if !ok {
		return agentProcesses(p.token)
	}
	return agentProcesses(p.token, leader)
}

// FinishAgent kills the process group, waits until no member is alive,
// drains the output pipes and ends every goroutine StartAgent began.
// events is the channel the caller still reads (nil once closed), which
// must close once OutputDone has. While draining, events still go to emit
// unless hurry is set (the run was cancelled or timed out). grace is how
// long the output may go without progress before reading stops. roots are
// processes noted before the agent was stopped, killed too if still
// running.
func FinishAgent[E any](p *AgentProcess, events <-chan E, emit func(E), hurry bool, grace time.Duration, roots AgentProcs) {
	roots = append(roots, p.Processes()...)
	// The leader is a zombie or still running, so -pgid names only this
	// agent's group. Killing it also ends background jobs the agent left.
	signalGroup(p.pgid, syscall.SIGKILL)
	<-p.exited
	if !p.reaped {
		p.cmd.Wait() // the exit status is read from cmd.ProcessState
	}
	waitGroupGone(p.pgid, reapTimeout)
	reapGroup(p.pgid)
	// Processes that left the group (setsid, or claude's own sessions for
	// its shell commands) are killed too, and reaped if they became
	// ralph's, so nothing the agent started outlives its task.
	stopEscaped(p.token, reapTimeout, roots...)

	// With the group and the escaped processes dead the pipes reach EOF
	// once the kernel has closed their descriptors. A process beyond
	// ralph's reach may still hold them: stop reading after a grace without
	// progress, or a hard limit. The grace is longer than a command's,
	// since cutting a busy reader short on a loaded machine could lose the
	// completion marker, and EOF ends the wait at once in every usual case.
	if hurry {
		grace = cancelDrainGrace
	}
	idle := time.NewTimer(grace)
	defer idle.Stop()
	hard := time.NewTimer(reapTimeout)
	defer hard.Stop()
	cut := func() {
		now := time.Now()
		p.stdout.SetReadDeadline(now)
		p.stderr.SetReadDeadline(now)
	}
	for events != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			if emit != nil && !hurry {
				emit(ev)
			}
			idle.Reset(grace)
		case <-idle.C:
			cut()
		case <-hard.C:
			cut()
		}
	}
	p.stdin.SetWriteDeadline(time.Now()) // in case an escaped process holds stdin unread
	<-p.stdinDone
	closeFiles(p.stdout, p.stderr)
}

// readAll passes everything read from f to fn until end of file or an error
// (including a read deadline).
func readAll(f *os.File, fn func([]byte)) {
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			fn(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
