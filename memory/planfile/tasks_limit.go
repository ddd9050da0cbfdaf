package planfile

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// grownTooLarge is a change that would take a task list past the size
// ralph reads of it (memory.MaxStateFile), which is refused, and the list
// left as it is. It is rootfs.ErrTooLarge, as a list already that large.
type grownTooLarge struct {
	path string
	size int64
}

func (e *grownTooLarge) Error() string {
	return fmt.Sprintf("%s would grow to %s (its task ids, or a change to it), more than the %s ralph reads of such a file, so ralph left it as it is; split the list or shorten it",
		e.path, text.Size(e.size), text.Size(memory.MaxStateFile))
}

func (e *grownTooLarge) Is(target error) bool { return target == rootfs.ErrTooLarge }
