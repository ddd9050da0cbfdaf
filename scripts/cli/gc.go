package cli

import (
	"os"
	"runtime/debug"
	"time"
)

// shortRunWindow is how long a one-shot runs with the collector held back.
const shortRunWindow = 2 * time.Second

// shortRunGC holds the garbage collector back for the first moments of a
// one-shot. A "say hi" allocates a few megabytes on its way to its answer
// and exits; against the runtime's 4 MB minimum heap that cost one more
// collection than `ralph --version` makes, about 1.5 ms of CPU on a
// two-core machine, for garbage the exit frees anyway. For shortRunWindow
// the heap may grow to five times what is live (a few megabytes at that
// point); a longer run then collects as usual. A GOGC the person set is
// left alone.
func shortRunGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(400)
	time.AfterFunc(shortRunWindow, func() { debug.SetGCPercent(100) })
}
