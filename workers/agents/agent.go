package agents

import (
	"github.com/ralph-dev/ralph/workers"

	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Kind names a coding-agent CLI that ralph can run once per task
// instead of its own model loop.
type Kind string

// CompletionMarker is what an agent prints to say the task is done.
const CompletionMarker = "<promise>COMPLETE</promise>"

// NoChangesMarker is what an agent prints instead to say the task is done
// and needed no change to any file (see AgentReport.NoChanges).
const NoChangesMarker = "<promise>NO_CHANGES</promise>"

// DefaultAgentTimeout bounds one task when Agent.Timeout is zero.
const DefaultAgentTimeout = 30 * time.Minute

// ErrAgentTimeout is wrapped by the error Run returns when the agent ran
// longer than its timeout and was killed.
var ErrAgentTimeout = errors.New("external agent timed out")

// Agent describes how to run one external CLI agent.
type Agent struct {
	Kind    Kind
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
	// opencode's permission config (see opencode.go).
	SetEnv []string
}

// Event is one piece of progress from a running agent. Kind is
// "text" (assistant text, or a plain output line), "tool" (a tool the
// agent started, summarised), "usage" (Usage is set), "stderr" (one line of
// the agent's stderr) or "error" (an error the agent reported in its stream).
type Event struct {
	Kind  string
	Text  string
	Usage *conversation.Usage
}

// Result is how one run of an external agent ended.
type Result struct {
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

// Run starts the agent with the prompt on its stdin, in its own process
// group in Root, passes its progress to emit (which may be nil, is only
// ever called from Run's own goroutine, and should return quickly: Run
// notices cancellation between calls) and returns when it has exited. A
// non-zero exit is not an error; ExitCode reports it. Errors are for failing
// to start, cancellation (wrapping ctx.Err()) and timeout (wrapping
// ErrAgentTimeout); either way the agent is stopped gracefully (SIGINT to
// its group, 3 s, SIGTERM, 2 s, SIGKILL). When Run returns no process the
// agent started is running, in its group or out of it (see
// workers.AgentProcess).
func (a Agent) Run(ctx context.Context, prompt string, emit func(Event)) (Result, error) {
	start := time.Now()
	res := Result{ExitCode: -1}
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
	if err := checkProjectSettings(a.Kind, a.Root); err != nil {
		return res, err
	}
	env = a.setEnv(scrubEnv(env, a.DropEnv, a.keepEnv(env)))
	if a.Root != "" {
		// PWD must name the directory the agent starts in, as a shell
		// would set it: opencode takes its project from PWD, and an
		// inherited one names ralph's own directory, not the project.
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PWD=") }), "PWD="+a.Root)
	}
	cmd := workers.AgentCommand(a.Root, env, name, args...)
	p, err := startAgent(cmd, a.Kind, prompt)
	if err != nil {
		return res, fmt.Errorf("cannot start the %s agent: %w", a.Kind, err)
	}

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
		case <-p.proc.Exited():
			break wait
		case <-timer.C:
			res.TimedOut = true
			runErr = fmt.Errorf("%w after %s; it was stopped", ErrAgentTimeout, workers.FormatSeconds(timeout))
			break wait
		case <-ctx.Done():
			runErr = fmt.Errorf("external agent cancelled; it was stopped: %w", ctx.Err())
			break wait
		}
	}
	var roots workers.AgentProcs
	if runErr != nil {
		close(p.stop) // the caller wants to move on; drop further events
		// Note the agent's processes while it still ties those that
		// emptied their environment to itself: once it exits they are
		// orphans nothing links to the agent.
		roots = p.proc.Processes()
		p.proc.Interrupt()
	}
	workers.FinishAgent(p.proc, events, emit, runErr != nil, agentDrainGrace, roots)

	res.Text, res.Completed = p.out.result()
	res.Usage, res.CostUSD = p.out.usage, p.out.cost
	res.AgentReport = p.out.report()
	res.Stderr = strings.TrimSpace(strings.ToValidUTF8(p.errOut.String(), "\uFFFD"))
	res.ExitCode = p.proc.ExitCode()
	res.Limit = p.out.limit
	if l, ok := ParseUsageLimit(res.Stderr, time.Now()); ok && (res.Limit == nil || res.Limit.Until.IsZero() && !l.Until.IsZero()) {
		res.Limit = &l
	}
	res.Duration = time.Since(start)
	return res, runErr
}

// startAgent starts the agent's process and the stream that reads its
// output; the events channel closes once both outputs have been read.
func startAgent(cmd *exec.Cmd, kind Kind, prompt string) (*agentRun, error) {
	r := &agentRun{
		events: make(chan Event, 64),
		stop:   make(chan struct{}),
		errOut: workers.NewHeadTailBuffer(maxAgentStderr),
	}
	r.out = newAgentStream(kind, r.send)
	errLines := lineSplitter{max: maxStderrLine, onLine: func(line []byte, _ bool) {
		if len(line) > 0 {
			r.send(Event{Kind: "stderr", Text: capEventText(string(line))})
		}
	}}
	p, err := workers.StartAgent(cmd, prompt, r.out.Write, func(b []byte) { r.errOut.Write(b); errLines.write(b) })
	if err != nil {
		return nil, err
	}
	r.proc = p
	go func() {
		<-p.OutputDone()
		r.out.flush()
		errLines.flush()
		close(r.events)
	}()
	return r, nil
}

// commandLine returns the program and arguments: the CLI's, or for an
// exec: agent bash -c with the command and its positional parameters.
func (a Agent) commandLine() (string, []string, error) {
	if a.Kind == AgentExec {
		if strings.TrimSpace(a.Command) == "" {
			return "", nil, errors.New("the exec agent has no command")
		}
		args := []string{"-c", a.Command}
		if len(a.Args) > 0 {
			args = append(append(args, "bash"), a.Args...)
		}
		return "bash", args, nil
	}
	c := cliFor(a.Kind)
	if c == nil {
		return "", nil, fmt.Errorf("unknown agent kind %q", a.Kind)
	}
	return a.program(), c.args(a.Args), nil
}

// program is the CLI's program: the agent's Command, else the kind's name.
func (a Agent) program() string {
	if bin := strings.TrimSpace(a.Command); bin != "" {
		return a.Command
	}
	return string(a.Kind)
}

// agentRun is one started agent: its process, and the events its output
// becomes. Run owns it.
type agentRun struct {
	proc   *workers.AgentProcess
	events chan Event
	stop   chan struct{} // closed when events are no longer wanted
	out    *agentStream
	errOut *workers.HeadTailBuffer
}

// send hands an event to Run's goroutine, or drops it once Run has stopped
// listening, so that a reader never blocks on a caller that left.
func (r *agentRun) send(ev Event) {
	select {
	case r.events <- ev:
	case <-r.stop:
	}
}

// agentDrainGrace is how long the output of a finished agent may go
// without progress before ralph stops reading it.
const agentDrainGrace = 250 * time.Millisecond
