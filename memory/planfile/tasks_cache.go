package planfile

import "sync"

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
	data string
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
	parsedMu.Lock()
	var f *TaskFile
	if c := &lastParsed; c.file != nil && c.data == string(data) {
		f = c.file.share()
		f.edited = false // it is the parse of data, as ParseTasks gives it
	}
	parsedMu.Unlock()
	if f != nil {
		if checkParsed != nil {
			checkParsed(f, data)
		}
		return f
	}
	f = ParseTasks(data)
	remember(f, data)
	return f
}

// remember keeps f, a parse of data (what was just read or written), for
// the next read of the same bytes. f stays the caller's: the cache keeps a
// copy sharing its slices, and whichever is edited first copies them.
func remember(f *TaskFile, data []byte) {
	kept := f.share()
	parsedMu.Lock()
	lastParsed = parsed{data: string(data), file: kept}
	parsedMu.Unlock()
}
