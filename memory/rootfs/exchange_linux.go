package rootfs

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noExchange says the file system refused RENAME_EXCHANGE once; later
// saves rename without asking again.
var noExchange atomic.Bool

// exchangeAt swaps a and b in dir (renameat2 with RENAME_EXCHANGE, which
// acts on the names themselves and follows no link at either).
func exchangeAt(dir *os.File, a, b string) error {
	if noExchange.Load() {
		return ErrNoExchange
	}
	fd := int(dir.Fd())
	var err error
	for {
		err = unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		noExchange.Store(true)
		return ErrNoExchange
	}
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
}
