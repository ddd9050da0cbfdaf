package repl

import (
	"io"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows ttyInput waits with WaitForMultipleObjects on the console's
// input handle and an event, the console's counterpart of poll(2) on the
// terminal and a pipe: Close and Inject set the event. The console is
// switched to virtual terminal input, so keys arrive as the escape
// sequences a Unix terminal sends, which readline and the paste folding
// read the same way.

func newTTYInput(fd int, onEsc func()) (*ttyInput, error) {
	ev, err := windows.CreateEvent(nil, 0, 0, nil) // auto-reset, unset
	if err != nil {
		return nil, err
	}
	h := windows.Handle(fd)
	var mode uint32
	if windows.GetConsoleMode(h, &mode) == nil {
		_ = windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_INPUT)
	}
	return &ttyInput{fd: fd, wakeR: int(ev), wakeW: int(ev), onEsc: onEsc}, nil
}

// wake ends a wait of readWait: the event it waits on with the console.
func (t *ttyInput) wake() { _ = windows.SetEvent(windows.Handle(t.wakeW)) }

// release closes the wake-up event once no read can be pending any more.
func (t *ttyInput) release() { _ = windows.CloseHandle(windows.Handle(t.wakeR)) }

// readWait reads what the console has, waiting at most timeoutMS (-1:
// forever). It returns 0 bytes when it timed out or was woken up.
func (t *ttyInput) readWait(buf []byte, timeoutMS int) (int, error) {
	h := windows.Handle(t.fd)
	wait := uint32(windows.INFINITE)
	if timeoutMS >= 0 {
		wait = uint32(timeoutMS)
	}
	for {
		ev, err := windows.WaitForMultipleObjects([]windows.Handle{h, windows.Handle(t.wakeR)}, false, wait)
		if err != nil {
			return 0, err
		}
		if ev != windows.WAIT_OBJECT_0 {
			return 0, nil // woken up, or timed out
		}
		if charWaiting(h) {
			break
		}
	}
	var n uint32
	if err := windows.ReadFile(h, buf, &n, nil); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return int(n), nil
}

var (
	procPeekConsoleInputW = windows.NewLazySystemDLL("kernel32.dll").NewProc("PeekConsoleInputW")
	procReadConsoleInputW = windows.NewLazySystemDLL("kernel32.dll").NewProc("ReadConsoleInputW")
)

// inputRecord is the console's INPUT_RECORD with its KEY_EVENT_RECORD
// spelled out; the other events are of the same size.
type inputRecord struct {
	EventType       uint16
	_               uint16
	KeyDown         int32
	RepeatCount     uint16
	VirtualKeyCode  uint16
	VirtualScanCode uint16
	Char            uint16
	ControlKeyState uint32
}

// charWaiting reports whether the console's input holds a key press that
// reading will return as characters. The handle is also signalled for
// records that carry none (focus, mouse, a resize, a key let go), on which
// ReadFile would block; those that come first are taken out. A handle that
// is no console (a pipe in the tests) always has something to read.
func charWaiting(h windows.Handle) bool {
	var recs [64]inputRecord
	var n uint32
	r, _, _ := procPeekConsoleInputW.Call(uintptr(h), uintptr(unsafe.Pointer(&recs[0])), uintptr(len(recs)), uintptr(unsafe.Pointer(&n)))
	if r == 0 {
		return true
	}
	skip := uint32(0)
	for ; skip < n; skip++ {
		if rec := recs[skip]; rec.EventType == windows.KEY_EVENT && rec.KeyDown != 0 && rec.Char != 0 {
			break
		}
	}
	if skip > 0 {
		var read uint32
		procReadConsoleInputW.Call(uintptr(h), uintptr(unsafe.Pointer(&recs[0])), uintptr(skip), uintptr(unsafe.Pointer(&read)))
	}
	return skip < n
}
