package rootfs

import (
	"errors"
	"fmt"
)

// ErrLinkOut says an instruction file is a link to a file outside the
// project, which ralph leaves out of the prompt unless the person listed
// its target in their config (instruction_links).
var ErrLinkOut = errors.New("a link out of the project")

// LinkOutError names the instruction file and where it points.
type LinkOutError struct {
	Name, Target string
}

func (e *LinkOutError) Error() string {
	return fmt.Sprintf("%s is %s (to %s)", e.Name, ErrLinkOut, e.Target)
}

func (e *LinkOutError) Unwrap() error { return ErrLinkOut }
