package workers

import (
	"errors"
	"fmt"

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
// returns the func that continues them, to be deferred before the path's
// last check. Freezes are serialised: a second editor call waits for the
// first to thaw. Where no process tree can be walked (not Linux), it
// answers errUseDisk while a process ralph started runs.
func holdStill() (thaw func(), err error) {
	h, err := proctree.Freeze()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotHeldStill, err)
	}
	if !canFreeze && liveProcesses() > 0 {
		h.Thaw()
		return nil, errUseDisk
	}
	return h.Thaw, nil
}
