package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// outcome is what one ralph command did.
type outcome struct {
	stdout, stderr []byte
	code           int
}

// sentence is the command's own account of a failure: its last words on
// stderr (ralph says what went wrong in one sentence there), else its
// exit code.
func (o outcome) sentence() string {
	lines := strings.Split(strings.TrimSpace(string(o.stderr)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return strings.TrimPrefix(last, "ralph: ")
	}
	return fmt.Sprintf("ralph exited with code %d", o.code)
}

// interruptGrace is how long a command stopped because its caller gave up
// has to save its state and exit after SIGINT before it is killed.
const interruptGrace = 10 * time.Second

// ralph runs `ralph -C dir args...` to its end and returns what it wrote.
// Its standard input is empty, never a terminal, so it asks nobody and
// reads no piped context. When ctx ends (the client cancelled the call)
// it is interrupted as Ctrl-C would, so it saves its state.
func (s *Server) ralph(ctx context.Context, dir string, args ...string) (outcome, error) {
	return s.ralphLines(ctx, dir, nil, args...)
}

// ralphLines is ralph, with each line of its stdout also handed to
// onLine (when set) as it is written, for a caller that reports progress.
func (s *Server) ralphLines(ctx context.Context, dir string, onLine func([]byte), args ...string) (outcome, error) {
	cmd := exec.CommandContext(ctx, s.opts.Bin, append([]string{"-C", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = s.opts.Env
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = interruptGrace
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if onLine != nil {
		cmd.Stdout = &lineWriter{buf: &out, onLine: onLine}
	}
	err := cmd.Run()
	o := outcome{stdout: out.Bytes(), stderr: errb.Bytes()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	case err != nil:
		return o, fmt.Errorf("running %s: %w", s.opts.Bin, err)
	}
	return o, nil
}

// jsonCommand runs a ralph command with --json and returns the object it
// printed; a command that failed without one is an error with its
// sentence. --json goes right after the command's name, before any "--"
// among its arguments.
func (s *Server) jsonCommand(ctx context.Context, dir string, args ...string) (map[string]any, error) {
	o, err := s.ralph(ctx, dir, append([]string{args[0], "--json"}, args[1:]...)...)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(o.stdout), &v); err != nil {
		if o.code != 0 {
			return nil, errors.New(o.sentence())
		}
		return nil, fmt.Errorf("ralph %s printed no JSON object: %w", args[0], err)
	}
	if o.code != 0 {
		v["exit_code"] = o.code
	}
	return v, nil
}

// lineWriter keeps everything written to it and hands each whole line to
// onLine as it arrives.
type lineWriter struct {
	buf     *bytes.Buffer
	pending []byte
	onLine  func([]byte)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.onLine(w.pending[:i])
		w.pending = w.pending[i+1:]
	}
}
