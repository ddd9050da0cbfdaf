//go:build unix

package repl

import (
	"os"
	"syscall"
)

// shellSignals are the signals the shell handles (see onSignal).
var shellSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH}

// resizeSignal tells the shell that the terminal's width changed.
var resizeSignal os.Signal = syscall.SIGWINCH
