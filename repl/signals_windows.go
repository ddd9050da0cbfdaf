package repl

import (
	"os"
	"syscall"
)

// shellSignals are the signals the shell handles (see onSignal): Go turns
// Ctrl-C, Ctrl-Break and a closed console window into these.
var shellSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// resizeSignal is nil: a Windows console sends no signal when its width
// changes, so the width is asked for again whenever readline draws.
var resizeSignal os.Signal
