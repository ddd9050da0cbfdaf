package workers

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// ErrNotHeldStill is wrapped when ralph could not hold the processes it
// started still for an editor's call (they kept forking or continuing
// each other): the editor is not asked.
var ErrNotHeldStill = errors.New("ralph could not hold the model's processes still while the editor opened the path, so the editor was not asked")

// errUseDisk is holdStill's answer where it cannot hold the processes
// ralph started still and one of them runs: the call takes the disk
// route, whose opens no process can lead out of the project.
var errUseDisk = errors.New("a process ralph started runs, so the call takes the disk route")

// The editor follows links when it opens the path ralph hands it, and
// ralph cannot make that open refuse them. Every process of the model's
// (its commands, foreground and background, what they started, the
// servers and hooks ralph runs, the sandbox's helper) is a descendant of
// ralph, and any of them could swap a directory of the path for a link
// between ralph's last check and the editor's open. So each editor call
// is bracketed by holdStill: freeze, check the path, ask the editor,
// thaw. A process not started by ralph (the person's own) is not held;
// it runs as the person, who could write the file anyway.

// holdStill stops every process ralph started (proctree.Freeze) and
// returns the hold that continues them, whose release is to be deferred
// before the path's last check. Freezes are serialised: a second editor
// call waits for the first to thaw. Where no process tree can be walked
// (not Linux), it answers errUseDisk while a process ralph started runs.
func holdStill() (*hold, error) {
	h, err := proctree.Freeze()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotHeldStill, err)
	}
	if !canFreeze && liveProcesses() > 0 {
		h.Thaw()
		return nil, errUseDisk
	}
	return &hold{thaw: h.Thaw}, nil
}

// hold is one editor call's freeze. An editor that has not answered when
// ralph stops waiting for it may still open the path later, so the
// processes stay stopped until it answers (keepUntil), not only until
// ralph gives up on it: a swap the model's command makes after the wait
// would otherwise lead that late open out of the project.
type hold struct {
	mu   sync.Mutex
	thaw func()
	kept bool
}

// release continues the processes, unless keepUntil took that over.
func (h *hold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kept || h.thaw == nil {
		return
	}
	h.thaw()
	h.thaw = nil
}

// keepUntil continues the processes when answered is closed (the
// editor's call returned: an answer, or the connection's end) instead of
// at release. The goroutine it starts ends then.
func (h *hold) keepUntil(answered <-chan struct{}) {
	h.mu.Lock()
	h.kept = true
	h.mu.Unlock()
	go func() {
		<-answered
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.thaw != nil {
			h.thaw()
			h.thaw = nil
		}
	}()
}
