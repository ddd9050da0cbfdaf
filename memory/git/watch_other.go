//go:build !linux

package git

// canWatch is false where no file shows what a process is blocked on:
// there a git blocked on a FIFO is ended only by its time limit or a
// stop (stopGrace after it).
const canWatch = false

func blockedOnSpecial(int, string) *SpecialFileError { return nil }
