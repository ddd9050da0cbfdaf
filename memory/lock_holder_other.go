//go:build !linux

package memory

import (
	"io/fs"
	"syscall"
)

// holderHandle holds nothing where the system does not say who holds a
// lock.
type holderHandle struct{}

// lockHolder: only Linux says which process holds a flock (/proc/locks);
// macOS, the BSDs and Windows do not, so --force signals nothing there
// and says so (coordinator/project/force.go).
func lockHolder(fs.FileInfo) (*Holder, error) { return nil, ErrHolderUnknown }

func (holderHandle) signal(int, syscall.Signal) error { return ErrHolderUnknown }

func (holderHandle) close() {}
