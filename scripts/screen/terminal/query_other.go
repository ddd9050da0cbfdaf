//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package terminal

import (
	"os"
	"time"
)

// queryBackground does not ask terminals on this platform: the answer
// would need a console API of its own. Dark is assumed.
func queryBackground(*os.File, time.Duration) (dark, ok bool) { return false, false }
