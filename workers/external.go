package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// ExternalKind names a coding-agent CLI that ralph can run once per task
// instead of its own model loop.
type ExternalKind string

// The external agents ralph knows how to drive.
const (
	AgentClaude   ExternalKind = "claude"   // claude -p --output-format stream-json --verbose
	AgentCodex    ExternalKind = "codex"    // codex exec --json -
	AgentOpenCode ExternalKind = "opencode" // opencode run --format json
	AgentGemini   ExternalKind = "gemini"   // gemini -p "" --output-format stream-json
	AgentExec     ExternalKind = "exec"     // bash -c <command>, plain text output
)

// CompletionMarker is what an agent prints to say the task is done.
const CompletionMarker = "<promise>COMPLETE</promise>"

// NoChangesMarker is what an agent prints instead to say the task is done
// and needed no change to any file (see AgentReport.NoChanges).
const NoChangesMarker = "<promise>NO_CHANGES</promise>"

// DefaultAgentTimeout bounds one task when ExternalAgent.Timeout is zero.
const DefaultAgentTimeout = 30 * time.Minute

// ErrAgentTimeout is wrapped by the error Run returns when the agent ran
// longer than its timeout and was killed.
var ErrAgentTimeout = errors.New("external agent timed out")

// ExternalAgent describes how to run one external CLI agent.
type ExternalAgent struct {
	Kind    ExternalKind
	Command string        // exec: the bash command line; otherwise the binary (default: the kind's name)
	Args    []string      // extra arguments (exec: positional parameters $1…)
	Timeout time.Duration // per task; zero means DefaultAgentTimeout
	Root    string        // working directory (the project root)
	Env     []string      // base environment; nil means os.Environ()
	// KeepEnv lists variables to pass even though they look like
	// credentials: exact names, or prefixes ending in "*".
	KeepEnv []string
	// DropEnv lists variables to drop although they do not look like
	// credentials (ralph's own key variable), unless KeepEnv or the
	// agent's needs keep them.
	DropEnv []string
	// SetEnv are variables ralph sets for the agent, after the scrubbing:
	// opencode's permission config (see external_opencode.go).
	SetEnv []string
}

// ExternalEvent is one piece of progress from a running agent. Kind is
// "text" (assistant text, or a plain output line), "tool" (a tool the
// agent started, summarised), "usage" (Usage is set), "stderr" (one line of
// the agent's stderr) or "error" (an error the agent reported in its stream).
type ExternalEvent struct {
	Kind  string
	Text  string
	Usage *conversation.Usage
}

// ExternalResult is how one run of an external agent ended.
type ExternalResult struct {
	// Text is the final answer without the completion marker: claude's
	// result field, codex's last agent message, or exec's stdout. It is
	// trimmed and capped (head and tail kept).
	Text string
	// Completed is true when CompletionMarker appeared in what the agent
	// itself wrote (see agentStream for why tool output does not count).
	Completed bool
	Usage     conversation.Usage
	CostUSD   *float64 // claude's total_cost_usd when present
	ExitCode  int      // -1 when the agent was killed by a signal or did not exit
	TimedOut  bool
	Duration  time.Duration
	Stderr    string // the head and tail of the agent's stderr, for diagnosing failures
	// AgentReport is what the agent said went wrong, if anything.
	AgentReport
	// Limit is the usage limit the agent said it hit (in its stream, its
	// output or its stderr), if any.
	Limit *UsageLimit
}

// ParseAgentSpec parses a --agent value: "claude", "codex", "opencode", "gemini" or
// "exec:<command>", where the command is run with bash -c.
func ParseAgentSpec(spec string) (ExternalAgent, error) {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return ExternalAgent{}, errors.New("the agent is empty; use claude, codex, opencode, gemini or exec:'<command>'")
	case lower == string(AgentClaude):
		return ExternalAgent{Kind: AgentClaude, Command: "claude"}, nil
	case lower == string(AgentCodex):
		return ExternalAgent{Kind: AgentCodex, Command: "codex"}, nil
	case lower == string(AgentOpenCode):
		return ExternalAgent{Kind: AgentOpenCode, Command: "opencode"}, nil
	case lower == string(AgentGemini):
		return ExternalAgent{Kind: AgentGemini, Command: "gemini"}, nil
	case strings.HasPrefix(lower, "exec:"):
		command := strings.TrimSpace(s[len("exec:"):])
		if command == "" {
			return ExternalAgent{}, errors.New("exec: needs a command, as in exec:'./my-agent.sh'")
		}
		return ExternalAgent{Kind: AgentExec, Command: command}, nil
	default:
		return ExternalAgent{}, fmt.Errorf("unknown agent %q; use claude, codex, opencode, gemini or exec:'<command>'", s)
	}
}

// commandLine returns the program and arguments for the agent's kind. The
// prompt always goes to stdin: codex reads it from there when its prompt
// argument is "-", claude -p and opencode run read stdin when they have
// no prompt argument, and gemini -p "" reads it and adds nothing.
func (a ExternalAgent) commandLine() (string, []string, error) {
	bin := func(def string) string {
		if strings.TrimSpace(a.Command) == "" {
			return def
		}
		return a.Command
	}
	switch a.Kind {
	case AgentClaude:
		return bin("claude"), append([]string{"-p", "--output-format", "stream-json", "--verbose"}, a.Args...), nil
	case AgentCodex:
		// Extra arguments go before "-" so that options are never taken
		// for part of the prompt.
		args := append([]string{"exec", "--json"}, a.Args...)
		return bin("codex"), append(args, "-"), nil
	case AgentOpenCode:
		return bin("opencode"), append([]string{"run", "--format", "json"}, a.Args...), nil
	case AgentGemini:
		// -p's text is appended to stdin's; empty, it only makes the run
		// headless.
		return bin("gemini"), append([]string{"-p", "", "--output-format", "stream-json"}, a.Args...), nil
	case AgentExec:
		if strings.TrimSpace(a.Command) == "" {
			return "", nil, errors.New("the exec agent has no command")
		}
		args := []string{"-c", a.Command}
		if len(a.Args) > 0 {
			args = append(append(args, "bash"), a.Args...)
		}
		return "bash", args, nil
	default:
		return "", nil, fmt.Errorf("unknown agent kind %q", a.Kind)
	}
}

// agentProc is one started agent: the parent's ends of its pipes and the
// goroutines that serve them. Run owns it and ends every goroutine before
// returning.
type agentProc struct {
	cmd               *exec.Cmd
	pgid              int
	stdin             *os.File // write end; the stdin goroutine closes it after the prompt
	stdout, stderr    *os.File // read ends
	events            chan ExternalEvent
	stop              chan struct{} // closed when events are no longer wanted
	stdinDone, exited chan struct{}
	reaped            bool   // the exited goroutine reaped the leader; written before exited closes
	token             string // the value of agentTokenVar in the agent's environment
	out               *agentStream
	errOut            *headTailBuffer
}

// Run starts the agent with the prompt on its stdin, in its own process
// group in Root, passes its progress to emit (which may be nil, is only
// ever called from Run's own goroutine, and should return quickly: Run
// notices cancellation between calls) and returns when it has exited. A
// non-zero exit is not an error; ExitCode reports it. Errors are for failing
// to start, cancellation (wrapping ctx.Err()) and timeout (wrapping
// ErrAgentTimeout); either way the agent is stopped gracefully (SIGINT to
// its group, 3 s, SIGTERM, 2 s, SIGKILL). When Run returns no process the
// agent started is running, in its group or out of it (see
// escaped_linux.go).
func (a ExternalAgent) Run(ctx context.Context, prompt string, emit func(ExternalEvent)) (ExternalResult, error) {
	start := time.Now()
	res := ExternalResult{ExitCode: -1}
	name, args, err := a.commandLine()
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("external agent not started: %w", err)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultAgentTimeout
	}
	env := a.Env
	if env == nil {
		env = os.Environ()
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	cmd := exec.Command(name, args...)
	cmd.Dir = a.Root
	// The token marks every process the agent starts, wherever it goes
	// (see escaped_linux.go).
	cmd.Env = append(a.setEnv(scrubEnv(env, a.DropEnv, a.keepEnv(env))), agentTokenVar+"="+token)
	if a.Root != "" {
		// PWD must name the directory the agent starts in, as a shell
		// would set it: opencode takes its project from PWD, and an
		// inherited one names ralph's own directory, not the project.
		cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "PWD=") }), "PWD="+a.Root)
	}
	cmd.SysProcAttr = procAttr()
	p, err := startAgent(cmd, a.Kind, prompt)
	if err != nil {
		return res, fmt.Errorf("cannot start the %s agent: %w", a.Kind, err)
	}
	p.token = token

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var runErr error
	events := p.events
wait:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil // the agent closed its output but is still running
			} else if emit != nil {
				emit(ev)
			}
		case <-p.exited:
			break wait
		case <-timer.C:
			res.TimedOut = true
			runErr = fmt.Errorf("%w after %s; it was stopped", ErrAgentTimeout, formatSeconds(timeout))
			break wait
		case <-ctx.Done():
			runErr = fmt.Errorf("external agent cancelled; it was stopped: %w", ctx.Err())
			break wait
		}
	}
	var roots []procInfo
	if runErr != nil {
		close(p.stop) // the caller wants to move on; drop further events
		// Note the agent's processes while it still ties those that
		// emptied their environment to itself: once it exits they are
		// orphans nothing links to the agent.
		roots = p.processes()
		p.interrupt()
	}
	p.finish(events, emit, runErr != nil, roots)

	res.Text, res.Completed = p.out.result()
	res.Usage, res.CostUSD = p.out.usage, p.out.cost
	res.AgentReport = p.out.report()
	res.Stderr = strings.TrimSpace(strings.ToValidUTF8(p.errOut.String(), "\uFFFD"))
	if p.cmd.ProcessState != nil {
		res.ExitCode = p.cmd.ProcessState.ExitCode()
	}
	res.Limit = p.out.limit
	if l, ok := ParseUsageLimit(res.Stderr, time.Now()); ok && (res.Limit == nil || res.Limit.Until.IsZero() && !l.Until.IsZero()) {
		res.Limit = &l
	}
	res.Duration = time.Since(start)
	return res, runErr
}

// startAgent starts cmd with three pipes and the goroutines that feed the
// prompt to stdin, read stdout and stderr, and wait for the leader to exit.
// The child gets the pipes' *os.File ends directly, so os/exec starts no
// copying goroutines of its own that Wait could block on.
func startAgent(cmd *exec.Cmd, kind ExternalKind, prompt string) (*agentProc, error) {
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
	err := cmd.Start()
	if err == nil {
		err = joinGroup(cmd)
	}
	closeFiles(f[0], f[3], f[5]) // only the child holds these ends now
	if err != nil {
		closeFiles(f[1], f[2], f[4])
		return nil, err
	}
	p := &agentProc{
		cmd: cmd, pgid: cmd.Process.Pid,
		stdin: f[1], stdout: f[2], stderr: f[4],
		events:    make(chan ExternalEvent, 64),
		stop:      make(chan struct{}),
		stdinDone: make(chan struct{}),
		exited:    make(chan struct{}),
		errOut:    newHeadTailBuffer(maxAgentStderr),
	}
	p.out = newAgentStream(kind, p.send)
	errLines := lineSplitter{max: maxStderrLine, onLine: func(line []byte, _ bool) {
		if len(line) > 0 {
			p.send(ExternalEvent{Kind: "stderr", Text: capEventText(string(line))})
		}
	}}

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
		readAll(p.stdout, p.out.Write)
		p.out.flush()
	}()
	go func() {
		defer readers.Done()
		readAll(p.stderr, func(b []byte) { p.errOut.Write(b); errLines.write(b) })
		errLines.flush()
	}()
	go func() {
		readers.Wait()
		close(p.events)
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

// send hands an event to Run's goroutine, or drops it once Run has stopped
// listening, so that a reader never blocks on a caller that left.
func (p *agentProc) send(ev ExternalEvent) {
	select {
	case p.events <- ev:
	case <-p.stop:
	}
}

// agentDrainGrace is how long the output of a finished agent may go
// without progress before ralph stops reading it.
const agentDrainGrace = 250 * time.Millisecond

// Stopping an agent is graceful first: claude and codex clean up their own
// children on SIGINT within a quarter of a second, which SIGKILL would deny
// them. Each signal goes to the whole group, and the next one follows if
// the agent has not exited after its wait. Whatever the agent leaves
// behind, in its group or not, finish kills.
var stopSteps = []struct {
	sig  syscall.Signal
	wait time.Duration
}{{syscall.SIGINT, 3 * time.Second}, {syscall.SIGTERM, 2 * time.Second}}

// interrupt asks the agent to stop: SIGINT to its group, then SIGTERM,
// waiting after each for the agent to exit. finish sends SIGKILL.
func (p *agentProc) interrupt() {
	for _, step := range stopSteps {
		// The leader is not reaped before finish, so -pgid names only
		// this agent's group.
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

// processes lists the agent's processes now: the leader, whatever carries
// its token, and their descendants.
func (p *agentProc) processes() []procInfo {
	leader, ok := readProc(p.pgid)
	if !ok {
		return agentProcesses(p.token)
	}
	return agentProcesses(p.token, leader)
}

// finish kills the process group, waits until no member is alive, drains
// the output pipes and ends every goroutine startAgent began. events is the
// channel Run still reads (nil once closed). While draining, events still go
// to emit unless the run was cancelled or timed out. roots are processes
// noted before the agent was stopped, killed too if still running.
func (p *agentProc) finish(events <-chan ExternalEvent, emit func(ExternalEvent), hurry bool, roots []procInfo) {
	roots = append(roots, p.processes()...)
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
	grace := agentDrainGrace
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
