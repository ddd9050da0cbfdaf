//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package terminal

import (
	"fmt"

	"golang.org/x/term"
)

// OneKey reports whether a terminal here can be read one key at a time
// (Cbreak and ReadWait).
const OneKey = false

// modes are what x/term keeps of a terminal's state: on Windows the
// console's input and output modes.
type modes = *term.State

func getModes(fd int) (modes, error) {
	st, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's modes: %w", err)
	}
	return st, nil
}

func setModes(fd int, m modes) error {
	if err := term.Restore(fd, m); err != nil {
		return fmt.Errorf("set the terminal's modes: %w", err)
	}
	return nil
}

// makeRaw is x/term's raw mode, which on Windows also turns virtual
// terminal input on, so keys arrive as a Unix terminal sends them.
func makeRaw(fd int, _ modes) error {
	if _, err := term.MakeRaw(fd); err != nil {
		return fmt.Errorf("set the terminal's modes: %w", err)
	}
	return nil
}

func makeCbreak(int, modes) error { return ErrNoKeyMode }
