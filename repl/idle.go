package repl

import (
	"errors"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
)

// hold takes the project for a job (Options.Hold) and shows the person
// what changed while the chat waited at its prompt.
func (s *Shell) hold() (release func(), err error) {
	if s.opts.Hold == nil {
		return func() {}, nil
	}
	release, news, err := s.opts.Hold()
	if err != nil {
		return nil, err
	}
	if news != "" {
		s.scr.line(s.scr.pal.Dim("↯ " + news))
	}
	return release, nil
}

// holding runs fn, work that is not a job (/undo, /plan), holding the
// project as a job does.
func (s *Shell) holding(fn func() error) error {
	release, err := s.hold()
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// heldCoord is the conversation as the shell drives it: /clear holds the
// project too, since it moves the project's record (.ralph/session.json)
// on to a new session, which must not happen under another ralph at work.
type heldCoord struct {
	*coordinator.Coordinator
	s *Shell
}

func (c heldCoord) Reset() (id string, err error) {
	err = c.s.holding(func() error {
		id, err = c.Coordinator.Reset()
		return err
	})
	return id, err
}

// refused tells the person why a line started no work when the project
// could not be taken back, and reports whether it did. The line is not
// lost: it is in the history, where ↑ brings it back. It is not sent by
// itself once the other ralph is done: that one may change the very files
// the message is about, and the person should see what it did before
// their request acts on them; an unbounded wait would also be work the
// prompt does not show.
func (s *Shell) refused(err error) bool {
	if errors.Is(err, errNoRoom) {
		return false
	}
	var le *memory.LockedError
	if errors.As(err, &le) && !le.Foreign {
		s.scr.line(s.scr.pal.Red("✗ not started: " + le.Who() + " is working in this project; ↑ brings your line back to send it again once it is done"))
		return true
	}
	s.scr.line(s.scr.pal.Red("✗ not started: " + err.Error()))
	return true
}
