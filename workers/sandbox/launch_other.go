//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// HelperArg is the hidden first argument that makes ralph's binary act as
// the sandbox helper.
const HelperArg = "__sandbox"

// IsHelper reports whether args (os.Args) start the sandbox helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// HelperMain refuses: the sandbox is built on Linux's Landlock and
// namespaces.
func HelperMain([]string) int {
	fmt.Fprintln(os.Stderr, "ralph: the sandbox needs Linux")
	return 2
}

// Launch is one command started through the helper; on this system there
// is none.
type Launch struct{}

// Outcome is what the sandbox has to add to a finished command's result.
type Outcome struct {
	Err     error
	Removed []string
}

// Wrap fails: only Linux has what the sandbox is built on.
func (p *Policy) Wrap(*exec.Cmd) (*Launch, error) {
	return nil, fmt.Errorf("%w: it needs Linux (Landlock and namespaces)", ErrUnavailable)
}

// Started does nothing here.
func (l *Launch) Started() {}

// Abort does nothing here.
func (l *Launch) Abort() {}

// Finish does nothing here.
func (l *Launch) Finish() Outcome { return Outcome{} }
