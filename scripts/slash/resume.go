package slash

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

// errLoopPaused points /resume at /run while the task loop is paused:
// /resume once went on with the loop, and now picks a conversation.
var errLoopPaused = errors.New("/resume: the task loop is paused; /run goes on with it (/resume picks a conversation to go on with once the loop has ended)")

// runResume picks a conversation of this project to go on with, as
// --resume does: without an argument it lists the sessions the picker
// offers, newest first; with a number from that list or a session id
// (or a prefix of one) the chat reopens in that session, through the
// same path `ralph --resume ID` takes.
func runResume(_ context.Context, h *Host, args string) (Outcome, error) {
	if h.LoopPaused != nil && h.LoopPaused() {
		return Outcome{}, errLoopPaused
	}
	ids, err := view.Resumable(h.Fs, h.Root)
	if err != nil {
		return Outcome{}, fmt.Errorf("/resume: %w", err)
	}
	if args == "" {
		if len(ids) == 0 {
			h.printf("this project has no conversations to resume yet\n")
			return Outcome{}, nil
		}
		h.printf("Sessions, newest first:\n")
		// The shell's margin and the mark take a few columns of the
		// width the picker fills.
		width := h.Width
		if width <= 0 {
			width = 80
		}
		for i, id := range ids {
			mark := ""
			if id == h.session() {
				mark = "   (this chat)"
			}
			h.printf("  %2d) %s%s\n", i+1, view.DescribeSession(h.Fs, h.Root, id, h.now(), width-4), mark)
		}
		h.printf("/resume N goes on with session N of the list; /resume ID with any session\n")
		return Outcome{}, nil
	}
	id := ""
	if n, err := strconv.Atoi(args); err == nil {
		if n < 1 || n > len(ids) {
			return Outcome{}, fmt.Errorf("/resume: %d is not a number from 1 to %d (/resume lists them)", n, len(ids))
		}
		id = ids[n-1]
	} else if id, err = memory.FindSession(h.Fs, h.Root, args); err != nil {
		return Outcome{}, fmt.Errorf("/resume: %w", err)
	}
	switch {
	case h.Reopen == nil:
		return Outcome{}, fmt.Errorf("/resume: going on with another conversation is %w here; `ralph --resume %s` opens it", ErrNotAvailable, id)
	case id == h.session():
		h.printf("session %s is this chat's\n", id)
		return Outcome{}, nil
	case h.busy():
		return Outcome{}, errors.New("/resume: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	h.Reopen(id)
	h.printf("going on in session %s\n", id)
	return Outcome{Exit: true}, nil
}
