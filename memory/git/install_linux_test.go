package git

import "testing"

// A file system that refuses the swap (NFS, an old kernel) has the
// restore rename over each file, with the same guarantees.
func TestRestoreWithoutTheSwap(t *testing.T) {
	noExchange.Store(true)
	defer noExchange.Store(false)
	TestRestoreReplacesWhatStandsInTheWay(t)
}
