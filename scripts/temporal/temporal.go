// Package temporal is ralph's side of a task loop run on Temporal
// (`ralph run --engine temporal`). ralph itself links no Temporal SDK (it
// would cost about 16 ms of every start-up and 10 MB): it execs
// ralph-temporal, a binary of its own module, and reads its events as JSON
// lines (coordinator/remote), which go to the same face as a local run's
// and are recorded as a session here (session.go). ralph stop, say, pause
// and continue become signals, ralph status and watch queries, through the
// same binary, while .ralph/engine.json (the marker) says the project's
// run is on Temporal. The commands themselves are scripts/cli's.
package temporal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// Engine is the --engine (and [engine] name) of the task loop on
// Temporal.
const Engine = "temporal"

// Binary is the name of the binary ralph execs.
const Binary = "ralph-temporal"

// ErrNoBinary: ralph-temporal is neither beside ralph nor on PATH.
var ErrNoBinary = errors.New("ralph run --engine temporal needs the ralph-temporal binary beside ralph or on PATH (make build builds both)")

// FindBinary finds ralph-temporal beside the running ralph, else
// on PATH.
func FindBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), Binary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := childenv.Program(Binary); err == nil {
		return p, nil
	}
	return "", ErrNoBinary
}

// ErrNoAddress: the run names no Temporal frontend to reach.
var ErrNoAddress = errors.New("--engine temporal needs --address HOST:PORT (or address in the [engine] table of your config)")

// ErrNotSteerable: what was asked of the run has no signal on Temporal.
var ErrNotSteerable = errors.New("the run is on Temporal, which takes stop, say, pause, continue and answer only")

// Run is a ralph run on Temporal.
type Run struct {
	Root   string
	Engine config.Engine
	// Start is the run's configuration, handed to ralph-temporal as data.
	Start remote.Start
}

// connArgs are the flags that reach the Temporal frontend e names.
func connArgs(e config.Engine) []string {
	args := []string{"--address", e.Address}
	if e.Namespace != "" {
		args = append(args, "--namespace", e.Namespace)
	}
	if e.TaskQueue != "" {
		args = append(args, "--task-queue", e.TaskQueue)
	}
	if e.TLS {
		args = append(args, "--tls")
	}
	return args
}

// Outcome is how a run on Temporal ended, as its face reports it.
type Outcome struct {
	// Result is the run's result line; nil when none came.
	Result *remote.Result
	// ExitCode is ralph-temporal's own, for a run that gave no result.
	ExitCode int
	// Signal is the one forwarded to ralph-temporal (Ctrl-C, SIGTERM),
	// nil when none was.
	Signal os.Signal
	// Took is how long the run was followed.
	Took time.Duration
}

// Exec starts (or attaches to) the project's run on Temporal and follows
// it: started is called once ralph-temporal runs, handle gets each event
// (after the run's session here recorded it), ralph-temporal's stderr goes
// to stderr. An interrupt, or ctx ending, stops the run on every worker.
// An error means the run did not start (ErrNoBinary and ErrNoAddress are
// the person's to mend).
func (t Run) Exec(ctx context.Context, stderr io.Writer, started func(), handle func(event.Event)) (Outcome, error) {
	bin, err := FindBinary()
	if err != nil {
		return Outcome{}, err
	}
	if t.Engine.Address == "" {
		return Outcome{}, ErrNoAddress
	}
	fs, err := rootfs.New(t.Root)
	if err != nil {
		return Outcome{}, err
	}
	marker := remote.Marker{Engine: Engine, Address: t.Engine.Address, Namespace: t.Engine.Namespace, TaskQueue: t.Engine.TaskQueue, TLS: t.Engine.TLS}
	if err := writeMarker(fs, t.Root, marker); err != nil {
		return Outcome{}, err
	}
	defer func() { _ = fs.Remove(markerPath(t.Root)) }()
	// The run's configuration travels as JSON on ralph-temporal's
	// standard input, whole: no setting is turned back into flags.
	startJSON, err := json.Marshal(t.Start)
	if err != nil {
		return Outcome{}, err
	}
	cmd := exec.Command(bin, append(connArgs(t.Engine), "run", "-C", t.Root, "--config", "-")...)
	cmd.Dir, cmd.Stderr, cmd.Stdin = t.Root, stderr, bytes.NewReader(startJSON)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Outcome{}, err
	}
	// Ctrl-C and SIGTERM go to ralph-temporal, which stops the run and
	// follows it to its end.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Outcome{}, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	started()
	rec := startSession(fs, t.Root, marker, t.Start.Run)
	var got os.Signal
	forwarded, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				got = s
				_ = cmd.Process.Signal(s)
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				return
			case <-exited:
				return
			}
		}
	}()
	res := Follow(out, func(ev event.Event) {
		rec.publish(ev)
		handle(ev)
	})
	waitErr := cmd.Wait()
	rec.finish(res)
	close(exited)
	<-forwarded
	o := Outcome{Result: res, Signal: got, Took: time.Since(start)}
	if res == nil {
		o.ExitCode = 1
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) && ee.ExitCode() > 0 {
			o.ExitCode = ee.ExitCode()
		}
	}
	return o, nil
}

// Answer answers the run's question, as ralph answer y or n from another
// terminal does: the terminal following the run asks it too.
func (t Run) Answer(ctx context.Context, yes bool, stderr io.Writer) error {
	word := "n"
	if yes {
		word = "y"
	}
	m := remote.Marker{Engine: Engine, Address: t.Engine.Address, Namespace: t.Engine.Namespace, TaskQueue: t.Engine.TaskQueue, TLS: t.Engine.TLS}
	_, err := Steer(ctx, t.Root, m, control.Request{Op: remote.OpAnswer, Text: word}, stderr)
	return err
}

// LoopResult is the run's result as the task loop's, which the face
// finishes a local run with; Result must not be nil.
func (o Outcome) LoopResult() loop.Result {
	res := o.Result
	lr := loop.Result{Reason: res.Reason, IsError: res.IsError, Done: res.Done, Failed: res.Failed,
		Stats: loop.Stats{Iterations: res.Iterations, CostUSD: res.CostUSD, TasksDone: res.Counts.Done, TasksFailed: res.Counts.Failed}}
	if res.Error != "" {
		lr.Err = errors.New(res.Error)
		if res.Reason == loop.ReasonConfig {
			// A worker refused the run's settings, or its model is
			// configured wrongly: bad input, exit 2, as a local run's.
			lr.Err = &llm.Error{Config: true, Msg: res.Error}
		}
	}
	if res.Reason == loop.ReasonInterrupted {
		lr.Signal = syscall.SIGINT
		if o.Signal == syscall.SIGTERM {
			lr.Signal = o.Signal
		}
	}
	return lr
}

// Follow reads ralph-temporal's lines, handing each event to handle, and
// returns the result line's result (nil when none came).
func Follow(r io.Reader, handle func(event.Event)) *remote.Result {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var res *remote.Result
	for sc.Scan() {
		var l remote.Line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Event != nil:
			handle(*l.Event)
		case l.Result != nil:
			res = l.Result
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return res
}

// markerPath is .ralph/engine.json, which says the project's run is on
// Temporal and how to reach it.
func markerPath(root string) string {
	return filepath.Join(root, memory.StateDir, remote.MarkerFile)
}

func writeMarker(fs afero.Fs, root string, m remote.Marker) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := fs.MkdirAll(filepath.Join(root, memory.StateDir), 0o755); err != nil {
		return err
	}
	return memory.WriteFileAtomic(fs, markerPath(root), append(data, '\n'), 0o644)
}

// ReadMarker reports whether the project's run is on Temporal, and how to
// reach it. A live local ralph holding the project's lock is what runs
// now, whatever the marker says: a run on Temporal holds no lock here, and
// a marker a crashed `ralph run --engine temporal` left behind must not
// turn stop, status and watch away from the ralph that runs.
func ReadMarker(fs afero.Fs, root string) (remote.Marker, bool) {
	data, err := afero.ReadFile(fs, markerPath(root))
	if err != nil {
		return remote.Marker{}, false
	}
	if _, st, err := memory.ReadLock(fs, root); err == nil && st == memory.LockHeld {
		return remote.Marker{}, false
	}
	var m remote.Marker
	if json.Unmarshal(data, &m) != nil || m.Engine != Engine || m.Address == "" {
		return remote.Marker{}, false
	}
	return m, true
}

func markerEngine(m remote.Marker) config.Engine {
	return config.Engine{Name: m.Engine, Address: m.Address, Namespace: m.Namespace, TaskQueue: m.TaskQueue, TLS: m.TLS}
}

// Steer is ralph stop, say, pause, continue and answer for a run on
// Temporal: a signal to its workflow; done is the sentence of what
// happens now. ralph-temporal's own complaints go to stderr.
func Steer(ctx context.Context, root string, m remote.Marker, req control.Request, stderr io.Writer) (done string, err error) {
	// The op is ralph-temporal's signal word as it is: both speak
	// remote's one vocabulary.
	switch req.Op {
	case remote.OpStop:
		done = "stopping: the attempts in flight are cancelled on every worker"
	case remote.OpSay:
		done = "queued: the agents working tasks get it at their next step boundary"
	case remote.OpPause:
		done = "pausing: no new task starts; the ones in flight finish"
	case remote.OpContinue:
		done = "continuing"
	case remote.OpAnswer:
		// The workflow's questions are the loop's yes/no ones;
		// ralph-temporal refuses any other answer in one sentence.
		done = "answered"
	default:
		return "", ErrNotSteerable
	}
	bin, err := FindBinary()
	if err != nil {
		return "", err
	}
	args := append(connArgs(markerEngine(m)), "signal", "-C", root, req.Op)
	if req.Op == remote.OpAnswer {
		args = append(args, req.Text)
	}
	if req.Op == remote.OpSay {
		args = append(args, req.Text)
		if req.Urgent {
			args = append(args, "--urgent")
		}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ralph-temporal signal %s: %w", req.Op, err)
	}
	return done, nil
}

// WriteStatus writes the status query's answer (Status's JSON) as ralph
// status's lines.
func WriteStatus(w io.Writer, m remote.Marker, data []byte) error {
	var st remote.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	c := st.Counts
	fmt.Fprintf(w, "Run on Temporal at %s (workflow %s): %s\n", m.Address, text.StripControls(st.WorkflowID), st.Status)
	fmt.Fprintf(w, "Tasks: %d done, %d failed, %d open; %s\n", c.Done, c.Failed, c.Open+c.InProgress, text.Counted(st.Iterations, "attempt", "attempts"))
	if len(st.Running) > 0 {
		fmt.Fprintf(w, "In flight: %s\n", text.StripControls(strings.Join(st.Running, ", ")))
	}
	if b := st.Breaker; b != nil {
		fmt.Fprintf(w, "Circuit breaker: %s (tripped %s)\n", b.State, text.Counted(b.Trips, "time", "times"))
	}
	return nil
}

// Status is the status query's JSON, as ralph-temporal prints it; what
// goes wrong on its way is written to stderr.
func Status(ctx context.Context, root string, m remote.Marker, stderr io.Writer) ([]byte, error) {
	bin, err := FindBinary()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append(connArgs(markerEngine(m)), "query", "-C", root, "status")...)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cannot ask the run on Temporal for its status: %w", err)
	}
	return out, nil
}

// Fleet is the status of the project's run on Temporal, with its tasks
// and the workers holding them, for ralph serve's fleet; ok is false when
// the project's run is not on Temporal. It makes the query ralph status
// makes.
func Fleet(ctx context.Context, fs afero.Fs, root string) (st remote.Status, ok bool, err error) {
	m, ok := ReadMarker(fs, root)
	if !ok {
		return st, false, nil
	}
	out, err := Status(ctx, root, m, io.Discard)
	if err != nil {
		return st, true, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, true, fmt.Errorf("the run on Temporal answered its status query with something else: %w", err)
	}
	return st, true, nil
}

// Attach follows the project's run on Temporal without starting one (ralph
// watch): each event to handle, until it ends. A run that ended with a
// failed task is no error: the watch did its job.
func Attach(ctx context.Context, root string, m remote.Marker, stderr io.Writer, handle func(event.Event)) error {
	bin, err := FindBinary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, append(connArgs(markerEngine(m)), "run", "--attach", "-C", root)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	Follow(out, handle)
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil
		}
		return err
	}
	return nil
}
