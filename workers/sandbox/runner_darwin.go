package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// On macOS the sandbox is Seatbelt, as codex and Claude Code use it there:
// every command starts under sandbox-exec with the profile SeatbeltProfile
// builds from the policy, and the kernel confines it and everything it
// starts before its first instruction. No helper process is needed.
//
// It is tested only by its profile's text (seatbelt_test.go) until a
// macOS machine runs it.

// sandboxExec is the program that applies a profile and starts a command.
const sandboxExec = "/usr/bin/sandbox-exec"

// HelperArg is the hidden first argument that makes ralph's binary act as
// the sandbox helper, which only Linux has.
const HelperArg = "__sandbox"

// IsHelper reports whether args (os.Args) start the sandbox helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// HelperMain refuses: on macOS, sandbox-exec starts each command itself.
func HelperMain([]string) int {
	fmt.Fprintln(os.Stderr, "ralph: on macOS the sandbox has no helper; commands start under sandbox-exec")
	return 2
}

// Runner starts commands under sandbox-exec with the policy's profile.
type Runner struct{ profile string }

// NewRunner builds the profile once for every command of the session.
func NewRunner(p *Policy) *Runner {
	if !p.Confines() {
		return &Runner{}
	}
	return &Runner{profile: SeatbeltProfile(p)}
}

// Start starts c under sandbox-exec, in a process group of its own whose
// id is the returned Process's Pid.
func (r *Runner) Start(ctx context.Context, c Command) (*Process, error) {
	if r.profile == "" {
		return nil, fmt.Errorf("%w: the policy confines nothing", ErrUnavailable)
	}
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, fmt.Errorf("%w: %s is missing", ErrUnavailable, sandboxExec)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args := append([]string{"-p", r.profile, "--", c.Path}, c.Args[1:]...)
	cmd := exec.Command(sandboxExec, args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	// A nil *os.File in an io.Reader would not be nil: set only the real ones.
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	// macOS cannot wait for an exit without reaping it (waitid's WNOWAIT
	// is not in package syscall there), so the leader is reaped here, as
	// ralph's unsandboxed commands are on macOS; its group is killed after.
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Close does nothing: there is no helper to stop.
func (r *Runner) Close() {}

// BeginStep does nothing on macOS: the nested guard, which checks a
// step's writes to the repositories' configuration, runs on Linux only;
// the file tools' own refusal of git directories (workers) holds here.
func (r *Runner) BeginStep() (check func() []Undone) { return func() []Undone { return nil } }

// GitPaths is nil on macOS, where no nested guard looks.
func (r *Runner) GitPaths() *GitPaths { return nil }

// Process is a command started under sandbox-exec.
type Process struct {
	// Pid is the command's pid and process group id.
	Pid    int
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // from cmd.Wait, written before exited closes
}

// Exited is closed when the command's first process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Abandon does nothing: a killed child of ralph's always exits.
func (p *Process) Abandon() {}

// Wait returns the command's wait status once Exited is closed; an
// unknown status is the Outcome's Err.
func (p *Process) Wait() (syscall.WaitStatus, Outcome) {
	<-p.exited
	var ws syscall.WaitStatus
	if ps := p.cmd.ProcessState; ps != nil {
		if s, ok := ps.Sys().(syscall.WaitStatus); ok {
			ws = s
		}
	}
	var exitErr *exec.ExitError
	if p.err != nil && !errors.As(p.err, &exitErr) {
		return ws, Outcome{Err: p.err}
	}
	return ws, Outcome{}
}
