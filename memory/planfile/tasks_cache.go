package planfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// The loop reads the task file at every step, from its start, its finish
// and its bookkeeping, to work on the freshest copy (a person may edit it
// while ralph runs). Parsing it each time made a step cost grow with the
// plan: on ten thousand tasks the parses were most of a task's time. So
// the last task file this process read or wrote is kept parsed, and a
// read whose bytes are exactly those bytes takes that parse instead of
// parsing again. The key is the content itself, not a modification time,
// so an edit that keeps the size and the time is still seen; what is
// saved is the parse, while the read stays (reading half a megabyte costs
// far less than parsing it).

// parsed is one task file's bytes and their parse, never edited. Only the
// bytes are the key: the parse is a function of them alone, whichever
// file system or path they came from, so a hit is always right, and a
// write that failed halfway needs no care (the next read's bytes decide).
type parsed struct {
	// data is never written to: it is handed out as the file's bytes
	// (readParsed).
	data []byte
	file *TaskFile
}

var (
	parsedMu   sync.Mutex
	lastParsed parsed
)

// checkParsed, when set (the package's tests set it), sees every cache
// hit with the bytes read: they check that the kept parse, edited or not,
// is what parsing those bytes gives.
var checkParsed func(f *TaskFile, data []byte)

// parseCached returns data's parse, from the cache when it holds the
// parse of the same bytes, as a file the caller may edit.
func parseCached(data []byte) *TaskFile {
	_, f := parseKept(data)
	return f
}

// parseKept is parseCached that also gives bytes equal to data which
// nobody writes to: the cache's own on a hit, else a copy, which the
// cache then keeps. So data may be a buffer the caller reuses.
func parseKept(data []byte) ([]byte, *TaskFile) {
	parsedMu.Lock()
	var f *TaskFile
	var kept []byte
	if c := &lastParsed; c.file != nil && bytes.Equal(c.data, data) {
		f, kept = c.file.share(), c.data
		// It is the parse of data, as ParseTasks gives it.
		f.edited, f.spliced, f.relaid = false, nil, false
	}
	parsedMu.Unlock()
	if f != nil {
		if checkParsed != nil {
			checkParsed(f, data)
		}
		return kept, f
	}
	kept = bytes.Clone(data)
	f = ParseTasks(kept)
	remember(f, kept)
	return kept, f
}

// remember keeps f, a parse of data (what was just read or written), for
// the next read of the same bytes. f stays the caller's: the cache keeps a
// copy sharing its slices, and whichever is edited first copies them.
// data becomes the cache's: nobody may write to it after.
func remember(f *TaskFile, data []byte) {
	kept := f.share()
	parsedMu.Lock()
	lastParsed = parsed{data: data, file: kept}
	parsedMu.Unlock()
}

// readSpace is the buffer the task file is read into (readParsed), so
// that a read that finds the cached bytes keeps nothing of its own; a
// read while another holds it reads into a new one rather than wait.
var (
	readSpaceMu sync.Mutex
	readSpace   []byte
)

// readParsed reads the task file at path whole, up to MaxStateFile (a
// larger one is refused before it is parsed, and so before anything
// could rewrite it), and gives its bytes, which nobody writes to, its
// parse (parseKept) and its permissions. A missing file is an empty
// list, with the mode a new one gets.
func readParsed(fs afero.Fs, path string) ([]byte, *TaskFile, os.FileMode, error) {
	var space *[]byte
	if readSpaceMu.TryLock() {
		defer readSpaceMu.Unlock()
		space = &readSpace
	} else {
		space = new([]byte)
	}
	data, fi, err := rootfs.ReadSmallInto(fs, path, memory.MaxStateFile, *space)
	if errors.Is(err, os.ErrNotExist) {
		return nil, parseCached(nil), 0o644, nil
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	*space = data[:0] // the array, grown or not, for the next read
	kept, f := parseKept(data)
	return kept, f, fi.Mode().Perm(), nil
}
