//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// HelperArg is the hidden first argument that makes ralph's binary act as
// the sandbox helper.
const HelperArg = "__sandbox"

// IsHelper reports whether args (os.Args) start the sandbox helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// HelperMain refuses: the helper is Linux's.
func HelperMain([]string) int {
	fmt.Fprintln(os.Stderr, "ralph: the sandbox helper runs only on Linux")
	return 2
}

// why says in one sentence why commands cannot be confined here.
func why() string {
	if runtime.GOOS == "windows" {
		return "Windows has nothing ralph can confine a command's writes and network with (Linux has Landlock and namespaces, macOS has Seatbelt)"
	}
	return "it needs Linux (Landlock and namespaces) or macOS (Seatbelt)"
}

// Runner starts confined commands; on this system it cannot.
type Runner struct{}

// NewRunner returns a runner that refuses every command.
func NewRunner(*Policy) *Runner { return &Runner{} }

// Start fails: only Linux and macOS have what the sandbox is built on.
func (r *Runner) Start(context.Context, Command) (*Process, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, why())
}

// Close does nothing here.
func (r *Runner) Close() {}

// BeginStep does nothing here: no nested guard runs (see Linux's).
func (r *Runner) BeginStep() (check func() []Undone) { return func() []Undone { return nil } }

// GitPaths is nil here, where no nested guard looks.
func (r *Runner) GitPaths() *GitPaths { return nil }

// Process is a started command; there are none here.
type Process struct{ Pid int }

// Exited is never closed here.
func (p *Process) Exited() <-chan struct{} { return nil }

// Abandon does nothing here.
func (p *Process) Abandon() {}

// Wait does nothing here.
func (p *Process) Wait() (ws syscall.WaitStatus, o Outcome) { return ws, o }
