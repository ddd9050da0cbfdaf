// Package realpath resolves a path's symbolic links, as
// filepath.EvalSymlinks does, and lets a bring-up resolve each directory
// once (Hold). Resolving a path lstats every directory above it: a
// session's bring-up resolves the project, the person's home, each of
// the secret paths beneath it and each root the model may write, from
// the command line, the door, the tools' kept paths, the sandbox's
// policy and the program resolver, and those walks went over the same
// few ancestors about a thousand times before the first request byte.
//
// Nothing the model does can come between the steps of a bring-up (no
// tool has run yet), so while some Hold is not released each absolute
// path's answer is kept and a longer path starts from its parent's,
// which costs one lstat a name. Only paths found are kept: one the
// bring-up makes (ralph's state directory, the first time) is looked
// for again until it is there. Every resolution after the bring-up, a
// tool's, a later workspace's, is made afresh from the disk as it is
// then.
package realpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// answer is one resolved path: its real form and whether it is a
// directory, or why it could not be resolved.
type answer struct {
	real  string
	dir   bool
	err   error
	known bool // dir says what the path is (a link's target not looked at says nothing)
}

// held are the answers kept while some Hold is not released.
var held struct {
	sync.Mutex
	n       int // Hold calls not released
	answers map[string]answer
}

// Hold keeps every answer Eval gives from now until release is called
// (once per Hold): for a bring-up, in which nothing can change the
// directories it resolves.
func Hold() (release func()) {
	held.Lock()
	if held.n++; held.n == 1 {
		held.answers = map[string]answer{}
	}
	held.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			held.Lock()
			defer held.Unlock()
			if held.n--; held.n == 0 {
				held.answers = nil
			}
		})
	}
}

// Eval is filepath.EvalSymlinks: path with its links resolved. While a
// Hold is kept, an absolute path's answer is remembered and its parent's
// answer reused.
func Eval(path string) (string, error) {
	if !filepath.IsAbs(path) || !holding() {
		return filepath.EvalSymlinks(path)
	}
	a := eval(filepath.Clean(path))
	return a.real, a.err
}

// holding reports whether some Hold is kept.
func holding() bool {
	held.Lock()
	defer held.Unlock()
	return held.answers != nil
}

// eval resolves the clean absolute path p, from its parent's answer.
func eval(p string) answer {
	held.Lock()
	a, ok := held.answers[p]
	held.Unlock()
	if ok {
		return a
	}
	a = resolve(p)
	if a.err != nil {
		// A missing path is looked for again: the bring-up makes some
		// (ralph's state directory, the first time), and a path found
		// later must be resolved as it is then.
		return a
	}
	held.Lock()
	if held.answers != nil {
		held.answers[p] = a
	}
	held.Unlock()
	return a
}

// resolve is one path's answer: its parent's, then one lstat of its own
// name; a link is resolved whole by filepath.EvalSymlinks, as it would
// have been.
func resolve(p string) answer {
	parent := filepath.Dir(p)
	if parent == p {
		return answer{real: p, dir: true, known: true} // the root
	}
	up := eval(parent)
	if up.err != nil {
		return up
	}
	if up.known && !up.dir {
		// As filepath.EvalSymlinks says of a name under a file.
		return answer{err: syscall.ENOTDIR}
	}
	at := filepath.Join(up.real, filepath.Base(p))
	fi, err := os.Lstat(at)
	if err != nil {
		return answer{err: err}
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return answer{real: at, dir: fi.IsDir(), known: true}
	}
	real, err := filepath.EvalSymlinks(at)
	if err != nil {
		return answer{err: err}
	}
	return answer{real: real}
}
