package memory

import (
	"crypto/sha256"
	"path/filepath"
	"sync"
)

// ralph writes some files that the sandbox also guards, when the kernel
// leaves it only Landlock: .ralph/config.toml, where an "always" answer
// is saved while other commands run. The sandbox puts a guarded file back
// after a command changed it, and must not take for the command's doing
// what ralph itself wrote meanwhile. So the atomic writes of the paths
// the sandbox watches are remembered, as a hash of what was written.

var (
	ownMu      sync.Mutex
	ownWatched = map[string]bool{}
	ownLast    = map[string][sha256.Size]byte{}
)

// WatchOwnWrites makes the atomic writes to paths remembered from now on.
func WatchOwnWrites(paths ...string) {
	ownMu.Lock()
	defer ownMu.Unlock()
	for _, p := range paths {
		ownWatched[filepath.Clean(p)] = true
	}
}

// recordOwnWrite remembers data as what ralph last wrote at path, when
// path is watched. It is called just before the new file takes path's
// place, so a reader that sees the file finds it remembered.
func recordOwnWrite(path string, data []byte) {
	path = filepath.Clean(path)
	ownMu.Lock()
	defer ownMu.Unlock()
	if ownWatched[path] {
		ownLast[path] = sha256.Sum256(data)
	}
}

// WroteLast reports whether data is what ralph itself last wrote at path
// (a watched path; see WatchOwnWrites).
func WroteLast(path string, data []byte) bool {
	path = filepath.Clean(path)
	ownMu.Lock()
	defer ownMu.Unlock()
	h, ok := ownLast[path]
	return ok && h == sha256.Sum256(data)
}
