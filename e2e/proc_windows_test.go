package e2e

import (
	"errors"
	"syscall"
)

// Windows has no Unix signals, process groups, user switches or
// pseudo-terminals, which the end-to-end tests drive ralph with; the
// package type-checks here (make cross), and these say, rather than
// pretend, that the tests cannot run.

// errNeedsUnix is what every process primitive returns on Windows.
var errNeedsUnix = errors.New("the end-to-end tests need Unix signals and process groups, which Windows lacks")

func signalProcess(int, syscall.Signal) error { return errNeedsUnix }

func signalGroup(int, syscall.Signal) error { return errNeedsUnix }

func asUser(uint32, uint32) *syscall.SysProcAttr { panic(errNeedsUnix) }

func inOwnGroup() *syscall.SysProcAttr { panic(errNeedsUnix) }

func onTerminal() *syscall.SysProcAttr { panic(errNeedsUnix) }
