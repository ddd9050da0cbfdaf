package terminal

import (
	"os"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// Desktop notifications from a terminal program have no standard; each
// terminal reads its own escape sequence, and one it does not know may
// print as garbage. So ralph writes one only to a terminal it recognises,
// by the variables terminals set for the programs they run:
//
//   - iTerm2 (TERM_PROGRAM=iTerm.app): OSC 9, "ESC ] 9 ; text BEL", the
//     sequence it introduced (iterm2.com/documentation-escape-codes.html);
//   - WezTerm (TERM_PROGRAM=WezTerm), Ghostty (TERM_PROGRAM=ghostty,
//     TERM=xterm-ghostty), foot (TERM=foot, foot-extra) and rxvt-unicode
//     (TERM=rxvt-unicode*): OSC 777, "ESC ] 777 ; notify ; title ; body
//     BEL", urxvt's form, which these read (their documentation: WezTerm's
//     escape sequences, Ghostty's OSC support, foot's ctlseqs);
//   - kitty (TERM=xterm-kitty, KITTY_WINDOW_ID): OSC 99, its own protocol,
//     "ESC ] 99 ; i=id:d=0 ; title ST" then "ESC ] 99 ; i=id:d=1:p=body ;
//     body ST" (sw.kovidgoyal.net/kitty/desktop-notifications); kitty
//     declined OSC 777 (kovidgoyal/kitty#1474).
//
// Inside tmux or screen (TMUX, STY, TERM_PROGRAM=tmux) the sequence would
// reach tmux, not the terminal, unless passthrough is configured; there,
// as on every other terminal, only the bell rings. The bell (BEL) works
// everywhere and is always rung.

// Notification protocols.
const (
	notifyNone   = ""
	notifyOSC9   = "osc9"
	notifyOSC777 = "osc777"
	notifyOSC99  = "osc99"
)

// notifyProtocol decides the terminal's protocol from its environment.
func notifyProtocol(getenv func(string) string) string {
	if getenv("TMUX") != "" || getenv("STY") != "" {
		return notifyNone
	}
	term := getenv("TERM")
	switch getenv("TERM_PROGRAM") {
	case "tmux", "screen":
		return notifyNone
	case "iTerm.app":
		return notifyOSC9
	case "WezTerm", "ghostty":
		return notifyOSC777
	}
	switch {
	case term == "xterm-kitty" || getenv("KITTY_WINDOW_ID") != "":
		return notifyOSC99
	case term == "xterm-ghostty", term == "foot", term == "foot-extra", strings.HasPrefix(term, "rxvt-unicode"):
		return notifyOSC777
	}
	return notifyNone
}

// NotifySequence is the bell followed by the desktop notification this
// terminal understands, if any, showing title and body. Both are cleaned
// of control characters and of what would end the sequence early.
func NotifySequence(getenv func(string) string, title, body string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	title, body = notifyText(title, 60), notifyText(body, 200)
	seq := "\a"
	switch notifyProtocol(getenv) {
	case notifyOSC9:
		msg := title
		if body != "" {
			msg += ": " + body
		}
		// ConEmu and Windows Terminal read "9;<digit>" as a command of
		// their own; a message never starts with a digit here.
		seq += "\x1b]9;" + msg + "\a"
	case notifyOSC777:
		// The fields are separated by semicolons, so the title may hold
		// none.
		seq += "\x1b]777;notify;" + strings.ReplaceAll(title, ";", ",") + ";" + body + "\a"
	case notifyOSC99:
		seq += "\x1b]99;i=ralph:d=0;" + title + "\x1b\\" + "\x1b]99;i=ralph:d=1:p=body;" + body + "\x1b\\"
	}
	return seq
}

// notifyText makes s one clean line of at most n bytes.
func notifyText(s string, n int) string {
	return text.Clip(strings.Join(strings.Fields(text.StripControls(s)), " "), n)
}

// Notification is NotifySequence for this process's standard error, or
// "" when it is not a terminal (or a dumb one) that the bell and the
// notification could reach.
func (f Facts) Notification(title, body string) string {
	getenv := f.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if !f.ErrTTY || getenv("TERM") == "dumb" {
		return ""
	}
	return NotifySequence(getenv, title, body)
}
