package rootfs

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noExchange says the file system refused RENAME_EXCHANGE once (NFS, an
// old kernel); later calls say ErrNoExchange without asking again.
var noExchange atomic.Bool

// ExchangeAt swaps the names a and b in the directory dirfd in one step
// (renameat2 with RENAME_EXCHANGE, which acts on the names themselves
// and follows no link at either). It is ErrNoExchange where the file
// system cannot, and wraps the system's error otherwise (ENOENT when
// either name is missing). The one exchange of ralph: undo's restore
// (memory/git) and a session's saves (Exchange) both use it.
func ExchangeAt(dirfd int, a, b string) error {
	if noExchange.Load() {
		return ErrNoExchange
	}
	var err error
	for {
		err = unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
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
	return &os.LinkError{Op: "renameat2", Old: a, New: b, Err: err}
}

func exchangeAt(dir *os.File, a, b string) error { return ExchangeAt(int(dir.Fd()), a, b) }
