package cli

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

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// ralph run --engine temporal runs the task loop as a Temporal workflow.
// ralph itself links no Temporal SDK (it would cost about 16 ms of every
// start-up and 10 MB): it execs ralph-temporal, a binary of its own module,
// and reads its events as JSON lines (coordinator/remote), which go to the
// same face as a local run's. ralph stop, say, pause and continue become
// signals, ralph status and watch queries, through the same binary, while
// .ralph/engine.json says the project's run is on Temporal.

// EngineTemporal is the --engine (and [engine] name) of the task loop on
// Temporal.
const EngineTemporal = "temporal"

// TemporalBinary is the name of the binary ralph execs.
const TemporalBinary = "ralph-temporal"

// ErrNoTemporalBinary: ralph-temporal is neither beside ralph nor on PATH.
var ErrNoTemporalBinary = errors.New("ralph run --engine temporal needs the ralph-temporal binary beside ralph or on PATH (make build builds both)")

// FindTemporalBinary finds ralph-temporal beside the running ralph, else
// on PATH.
func FindTemporalBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), TemporalBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := childenv.Program(TemporalBinary); err == nil {
		return p, nil
	}
	return "", ErrNoTemporalBinary
}

// TemporalRun is a ralph run on Temporal.
type TemporalRun struct {
	Root   string
	Engine config.Engine
	// Start is the run's configuration, handed to ralph-temporal as data.
	Start remote.Start
}

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

// RunTemporal starts (or attaches to) the project's run on Temporal and
// follows it like a local run: the same events to the face, the same
// result and exit codes. An interrupt stops the run on every worker.
func RunTemporal(ctx context.Context, face *OneShot, t TemporalRun) int {
	bin, err := FindTemporalBinary()
	if err != nil {
		return face.Fail(ExitUsage, err)
	}
	if t.Engine.Address == "" {
		return face.Fail(ExitUsage, errors.New("--engine temporal needs --address HOST:PORT (or address in the [engine] table of your config)"))
	}
	fs, err := rootfs.New(t.Root)
	if err != nil {
		return face.Fail(ExitFailed, err)
	}
	marker := remote.Marker{Engine: EngineTemporal, Address: t.Engine.Address, Namespace: t.Engine.Namespace, TaskQueue: t.Engine.TaskQueue, TLS: t.Engine.TLS}
	if err := writeMarker(fs, t.Root, marker); err != nil {
		return face.Fail(ExitFailed, err)
	}
	defer func() { _ = fs.Remove(markerPath(t.Root)) }()
	// The run's configuration travels as JSON on ralph-temporal's
	// standard input, whole: no setting is turned back into flags.
	startJSON, err := json.Marshal(t.Start)
	if err != nil {
		return face.Fail(ExitFailed, err)
	}
	cmd := exec.Command(bin, append(connArgs(t.Engine), "run", "-C", t.Root, "--config", "-")...)
	cmd.Dir, cmd.Stderr, cmd.Stdin = t.Root, face.Stderr, bytes.NewReader(startJSON)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return face.Fail(ExitFailed, err)
	}
	// Ctrl-C and SIGTERM go to ralph-temporal, which stops the run and
	// follows it to its end.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return face.Fail(ExitFailed, fmt.Errorf("cannot start %s: %w", bin, err))
	}
	face.Start()
	defer face.Close()
	rec := startTemporalSession(fs, t.Root, marker, t.Start.Run)
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
	res := follow(out, func(ev coordinator.Event) {
		rec.publish(ev)
		face.Handle(ev)
	})
	waitErr := cmd.Wait()
	rec.finish(res)
	close(exited)
	<-forwarded
	if res == nil {
		code := 1
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
		return face.Fail(code, fmt.Errorf("the run on Temporal gave no result (ralph-temporal exited %d)", code))
	}
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
		if got == syscall.SIGTERM {
			lr.Signal = got
		}
	}
	// The workflow reports its session's figures; what an earlier run of
	// it spent is not told apart here.
	return face.FinishLoop(lr, res.SessionID, time.Since(start), res.Usage, memory.State{}, res.Counts)
}

// follow reads ralph-temporal's lines, handing each event to handle, and
// returns the result line's result (nil when none came).
func follow(r io.Reader, handle func(coordinator.Event)) *remote.Result {
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

// TemporalMarker reports whether the project's run is on Temporal, and
// how to reach it. A live local ralph holding the project's lock is what
// runs now, whatever the marker says: a run on Temporal holds no lock
// here, and a marker a crashed `ralph run --engine temporal` left behind
// must not turn stop, status and watch away from the ralph that runs.
func (r Records) TemporalMarker() (remote.Marker, bool) {
	data, err := afero.ReadFile(r.Fs, markerPath(r.Root))
	if err != nil {
		return remote.Marker{}, false
	}
	if _, st, err := memory.ReadLock(r.Fs, r.Root); err == nil && st == memory.LockHeld {
		return remote.Marker{}, false
	}
	var m remote.Marker
	if json.Unmarshal(data, &m) != nil || m.Engine != EngineTemporal || m.Address == "" {
		return remote.Marker{}, false
	}
	return m, true
}

func markerEngine(m remote.Marker) config.Engine {
	return config.Engine{Name: m.Engine, Address: m.Address, Namespace: m.Namespace, TaskQueue: m.TaskQueue, TLS: m.TLS}
}

// SteerTemporal is ralph stop, say, pause and continue for a run on
// Temporal: a signal to its workflow.
func (r Records) SteerTemporal(ctx context.Context, m remote.Marker, req control.Request) int {
	var op, done string
	switch req.Op {
	case control.OpStop:
		op, done = "stop", "stopping: the attempts in flight are cancelled on every worker"
	case control.OpSay:
		op, done = "say", "queued: the agents working tasks get it at their next step boundary"
	case control.OpPause:
		op, done = "pause", "pausing: no new task starts; the ones in flight finish"
	case control.OpContinue:
		op, done = "continue", "continuing"
	default:
		fmt.Fprintln(r.Err, "ralph: the run is on Temporal, where nobody asks questions to answer")
		return ExitUsage
	}
	bin, err := FindTemporalBinary()
	if err != nil {
		fmt.Fprintln(r.Err, "ralph: "+err.Error())
		return ExitUsage
	}
	args := append(connArgs(markerEngine(m)), "signal", "-C", r.Root, op)
	if req.Op == control.OpSay {
		args = append(args, req.Text)
		if req.Urgent {
			args = append(args, "--urgent")
		}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = r.Err
	if err := cmd.Run(); err != nil {
		return ExitFailed
	}
	if r.JSON {
		_ = r.writeJSON(control.Done("%s", done))
	} else {
		fmt.Fprintln(r.Out, done)
	}
	return ExitOK
}

// StatusTemporal is ralph status for a run on Temporal: its workflow's
// status query.
func (r Records) StatusTemporal(ctx context.Context, m remote.Marker) error {
	out, err := queryTemporalStatus(ctx, r.Root, m, r.Err)
	if err != nil {
		return err
	}
	if r.JSON {
		_, err = r.Out.Write(out)
		return err
	}
	var st remote.Status
	if err := json.Unmarshal(out, &st); err != nil {
		return err
	}
	c := st.Counts
	fmt.Fprintf(r.Out, "Run on Temporal at %s (workflow %s): %s\n", m.Address, text.StripControls(st.WorkflowID), st.Status)
	fmt.Fprintf(r.Out, "Tasks: %d done, %d failed, %d open; %s\n", c.Done, c.Failed, c.Open+c.InProgress, text.Counted(st.Iterations, "attempt", "attempts"))
	if len(st.Running) > 0 {
		fmt.Fprintf(r.Out, "In flight: %s\n", text.StripControls(strings.Join(st.Running, ", ")))
	}
	if b := st.Breaker; b != nil {
		fmt.Fprintf(r.Out, "Circuit breaker: %s (tripped %s)\n", b.State, text.Counted(b.Trips, "time", "times"))
	}
	return nil
}

// queryTemporalStatus is the status query's JSON, as ralph-temporal
// prints it; what goes wrong on its way is written to stderr.
func queryTemporalStatus(ctx context.Context, root string, m remote.Marker, stderr io.Writer) ([]byte, error) {
	bin, err := FindTemporalBinary()
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

// TemporalFleet is the status of the project's run on Temporal, with its
// tasks and the workers holding them, for ralph serve's fleet; ok is
// false when the project's run is not on Temporal. It makes the query
// ralph status makes.
func TemporalFleet(ctx context.Context, fs afero.Fs, root string) (st remote.Status, ok bool, err error) {
	m, ok := Records{Fs: fs, Root: root}.TemporalMarker()
	if !ok {
		return st, false, nil
	}
	out, err := queryTemporalStatus(ctx, root, m, io.Discard)
	if err != nil {
		return st, true, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, true, fmt.Errorf("the run on Temporal answered its status query with something else: %w", err)
	}
	return st, true, nil
}

// WatchTemporal is ralph watch for a run on Temporal: its events as they
// come (stream-json with jsonOut), until it ends.
func (r Records) WatchTemporal(ctx context.Context, m remote.Marker, jsonOut bool) error {
	bin, err := FindTemporalBinary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, append(connArgs(markerEngine(m)), "run", "--attach", "-C", r.Root)...)
	cmd.Stderr = r.Err
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	js := r.newJSONWatch()
	follow(out, func(ev coordinator.Event) {
		switch {
		case jsonOut:
			js.Event(ev)
		case ev.Text != "":
			fmt.Fprintf(r.Out, "%s %s\n", ev.Time.Local().Format("15:04:05"), text.StripControls(ev.Text))
		}
	})
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil // the run ended with a failed task: the watch did its job
		}
		return err
	}
	return nil
}
