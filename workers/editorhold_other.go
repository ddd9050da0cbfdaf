//go:build !linux

package workers

import "sync/atomic"

// canFreeze: without /proc, proctree.Freeze only keeps ralph from starting
// processes; those already running cannot be stopped, so the editor
// route is taken only while none runs.
const canFreeze = false

// live counts the processes ralph started (commands, servers, hooks,
// agents) that have not exited.
var live atomic.Int64

func liveProcesses() int64 { return live.Load() }

// trackLive counts a started process until exited closes. The goroutine
// is the process's: it ends when the process does.
func trackLive(exited <-chan struct{}) {
	live.Add(1)
	go func() {
		<-exited
		live.Add(-1)
	}()
}
