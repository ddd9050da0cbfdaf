package memory

import (
	"errors"
	"time"

	"github.com/spf13/afero"
	"golang.org/x/sys/windows"
)

// replaceWait bounds how long replace waits for readers of the file it
// replaces.
const replaceWait = 2 * time.Second

// replace renames from over to. Windows replaces a file atomically too
// (MoveFileEx), but not while another handle has it open without
// FILE_SHARE_DELETE, which Go's own opens leave out: a `ralph status` or
// `ralph watch` reading the file at that moment makes the rename fail. So
// a refused rename is tried again, for up to replaceWait, as readers hold
// these files for microseconds.
func replace(fs afero.Fs, from, to string) error {
	deadline := time.Now().Add(replaceWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := fs.Rename(from, to)
		if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}
