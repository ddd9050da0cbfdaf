package git

import (
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A file system that refuses the swap (NFS, an old kernel) has the
// restore rename over each file, with the same guarantees.
func TestRestoreWithoutTheSwap(t *testing.T) {
	defer func(f func(int, string, string) error) { exchangeAt = f }(exchangeAt)
	exchangeAt = func(int, string, string) error { return rootfs.ErrNoExchange }
	TestRestoreReplacesWhatStandsInTheWay(t)
}
