package terminal

import "errors"

// Mode is a terminal's modes as they were before ralph changed them, to
// put back with Restore. Every face changes the terminal's modes through
// this file's functions (chat's line editor, the one-shot's one-key
// questions, the background colour query), so each mode is made one way
// on every platform, and put back the same way.
type Mode struct {
	fd    int
	saved modes
}

// ErrNoKeyMode is Cbreak where keys cannot be read one by one: the
// Windows console reads keys through an API of its own, which ralph does
// not use, so questions there are answered with a line.
var ErrNoKeyMode = errors.New("the terminal cannot be read one key at a time here")

// Save reads fd's modes, to put back later; it changes nothing.
func Save(fd int) (*Mode, error) {
	m, err := getModes(fd)
	if err != nil {
		return nil, err
	}
	return &Mode{fd: fd, saved: m}, nil
}

// Raw puts fd in the raw mode a line editor reads keys in (cfmakeraw:
// no echo, no line buffering, no signals from keys) but keeps output
// processing on, so that "\n" written by any part of ralph still starts
// a new line at the left edge. It returns the modes before.
func Raw(fd int) (*Mode, error) {
	m, err := Save(fd)
	if err != nil {
		return nil, err
	}
	return m, makeRaw(fd, m.saved)
}

// Cbreak puts fd in the mode a question answered by one key reads it
// in: keys come one by one and unechoed, while Ctrl-C still signals and
// output is processed as usual. It returns the modes before, or
// ErrNoKeyMode where that mode does not exist.
func Cbreak(fd int) (*Mode, error) {
	m, err := Save(fd)
	if err != nil {
		return nil, err
	}
	return m, makeCbreak(fd, m.saved)
}

// Restore puts the terminal's modes back as they were when m was taken.
func (m *Mode) Restore() error { return setModes(m.fd, m.saved) }
