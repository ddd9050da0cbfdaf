package hooks

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/ralph-dev/ralph/workers"
)

// Sandbox starts a hook inside the sandbox of the session's mode, through
// the door a project's MCP server takes; *workers.Workspace is one.
type Sandbox interface {
	StartHook(ctx context.Context, cmd *exec.Cmd) (*workers.Group, error)
}

// sandboxed reports whether h runs in the sandbox: every hook does but
// the person's own ones their config lets out (docs/sandbox.md), since
// even the person's hook runs in the project, where `npx prettier` or
// ./node_modules/.bin/eslint is code the model could have written.
func (r *Runner) sandboxed(h Hook) bool {
	return r.Sandbox != nil && !(h.Unsandboxed && h.Source == SourceUser)
}

// start starts cmd as h's process, with stdin on its standard input and
// its outputs into stdout and stderr. drained waits, once the group is
// stopped, until everything the hook wrote was copied.
func (r *Runner) start(ctx context.Context, h Hook, cmd *exec.Cmd, stdin []byte, stdout, stderr io.Writer) (g *workers.Group, drained func(), err error) {
	if !r.sandboxed(h) {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), stdout, stderr
		g, err = workers.StartGroup(cmd)
		return g, func() {}, err
	}
	// The sandbox's helper passes files, not Go writers: pipes, whose
	// far ends ralph copies.
	var ends []*os.File
	closeAll := func() {
		for _, f := range ends {
			_ = f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		rd, wr, err := os.Pipe()
		if err == nil {
			ends = append(ends, rd, wr)
		}
		return rd, wr, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	g, err = r.Sandbox.StartHook(ctx, cmd)
	// The hook holds its own ends now (or never will).
	_, _, _ = inR.Close(), outW.Close(), errW.Close()
	if err != nil {
		_, _, _ = inW.Close(), outR.Close(), errR.Close()
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		// A hook that does not read its input must not keep ralph
		// waiting: the write ends when the hook's group is gone.
		_, _ = inW.Write(stdin)
		_ = inW.Close()
	}()
	for _, c := range []struct {
		from *os.File
		to   io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		go func() {
			defer wg.Done()
			_, _ = io.Copy(c.to, c.from)
			_ = c.from.Close()
		}()
	}
	return g, wg.Wait, nil
}
