package control

import (
	"errors"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/interrupts"
)

// StopText says where a hard stop from the socket came from (Request.From:
// "" for ralph stop, FromWeb for the stop button of ralph serve's page);
// the run's interrupted event and result carry it, after "stopped by".
func StopText(from string) string {
	if from == FromWeb {
		return "the stop button on ralph serve's page"
	}
	return "ralph stop from another terminal"
}

// Steer is the Target of the faces without a prompt (one-shot mode,
// scripts, ralph run): a request becomes what the same words would at the
// terminal. A stop is the hard stop Ctrl-C queues; a message is queued
// for the next step boundary (urgent: it cuts the current step); pause
// and continue act on the task loop.
type Steer struct {
	// Queue takes the hard stops, and the messages when Tell is nil.
	Queue *interrupts.Queue
	// Tell, when set, delivers messages instead (the task loop's workers,
	// see coordinator.TellWorkers) and says how many took it; a negative
	// count says they cannot take messages at all.
	Tell func(interrupts.Interrupt) int
	// Loop pauses and resumes the task loop; nil when none runs.
	Loop *loop.Control
}

// Stop implements Target.
func (s Steer) Stop(from string) Reply {
	s.Queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop, Text: StopText(from)})
	return Done("stopping: the work in flight is cancelled and the state saved")
}

// Say implements Target.
func (s Steer) Say(text string, urgent bool) Reply {
	text = strings.TrimSpace(text)
	if text == "" {
		return Reply{Bad: true, Text: "the message is empty"}
	}
	it := interrupts.Interrupt{Kind: interrupts.Normal, Text: text}
	if urgent {
		it.Kind = interrupts.Urgent
	}
	if s.Tell == nil {
		s.Queue.Push(it)
		if urgent {
			return Done("urgent: cutting the current step; the model reads your message next")
		}
		return Done("queued: delivered at the next step boundary")
	}
	switch n := s.Tell(it); {
	case n < 0:
		return NotDone("the tasks are worked by an external agent, which takes no messages")
	case n == 0:
		return Done("queued: no task is being worked now; the next task started gets it")
	case n == 1:
		return Done("queued: the agent working a task gets it at its next step boundary")
	default:
		return Done("queued: the %d agents working tasks get it at their next step boundary", n)
	}
}

// Pause implements Target.
func (s Steer) Pause() Reply {
	if s.Loop == nil {
		return NotDone("no task loop is running here (ralph pause is for ralph run and /run)")
	}
	if s.Loop.Paused() {
		return Done("the task loop is paused already; ralph continue lets it go on")
	}
	if err := s.Loop.Pause(); err != nil {
		return notRunning(err)
	}
	return Done("paused: no new task starts; the tasks in flight finish first")
}

// Continue implements Target.
func (s Steer) Continue() Reply {
	if s.Loop == nil {
		return NotDone("no task loop is running here (ralph continue is for ralph run and /run)")
	}
	if !s.Loop.Paused() {
		return Done("the task loop is not paused; it goes on")
	}
	if err := s.Loop.Resume(); err != nil {
		return notRunning(err)
	}
	return Done("continuing: the task loop goes on with the next task")
}

func notRunning(err error) Reply {
	if errors.Is(err, loop.ErrNoLoop) {
		return NotDone("no task loop is running here")
	}
	return NotDone("%s", err.Error())
}
