// Package terminal is the one place that knows what ralph is talking to:
// which of its standard streams are terminals, how wide the terminal is,
// and whether colour and escape sequences are wanted. Every face asks it
// instead of deciding for itself, so they follow the same rules.
package terminal

import (
	"os"

	"golang.org/x/term"
)

// Facts describe ralph's standard streams.
type Facts struct {
	In, Out, Err          *os.File
	InTTY, OutTTY, ErrTTY bool
	// Width and Height are the output terminal's size in cells; 0 when
	// unknown.
	Width, Height int
	// Color: styled output is wanted. It is off with --no-color, with
	// NO_COLOR set and not empty (https://no-color.org), and on a dumb
	// terminal (TERM=dumb), which cannot draw escape sequences.
	Color bool
	// Style is the --style flag: auto, dark, light or notty; "" when not
	// given (see RenderStyle).
	Style string

	getenv func(string) string
}

// Detect reads the facts of the process's standard streams.
func Detect(noColor bool, getenv func(string) string) Facts {
	f := Facts{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, getenv: getenv}
	f.InTTY, f.OutTTY, f.ErrTTY = IsTerminal(os.Stdin), IsTerminal(os.Stdout), IsTerminal(os.Stderr)
	f.Color = WantColor(noColor, getenv)
	if f.OutTTY {
		f.Width, f.Height = Size(os.Stdout, 0, 0)
	}
	return f
}

// WantColor applies the colour rule: not with --no-color, NO_COLOR or
// TERM=dumb.
func WantColor(noColor bool, getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	return !noColor && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// Width is f's width in cells, or 0 when it is not a terminal.
func Width(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// Size is f's width and height in cells, or the given defaults when f is
// not a terminal.
func Size(f *os.File, defW, defH int) (int, int) {
	w, h, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return defW, defH
	}
	return w, h
}
