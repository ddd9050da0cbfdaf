package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
)

// session is one ACP session: an opened project and the face attached to
// it. The project lock is held only while a prompt runs, as chat holds it
// (project.LetGoWhenIdle), so another ralph may work in the project while
// the editor waits.
type session struct {
	srv *Server
	id  string
	p   *project.Project
	at  *project.Attached
	out *updates

	mu sync.Mutex
	// stopRun stops the prompt running now (nil when none runs); stopped
	// says it was asked to.
	stopRun func()
	stopped bool
	closed  bool
	// runs counts the prompts running, for close to wait on.
	runs sync.WaitGroup
}

// newSession attaches the ACP face to an opened project.
func newSession(s *Server, p *project.Project) *session {
	ss := &session{srv: s, id: p.Session.ID, p: p}
	ss.out = newUpdates(s, ss)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ss.out.run()
	}()
	// The handler only queues the event (InStep: it costs an append), so
	// every event of a turn is queued before the turn returns and before
	// an approval question about its tool call is asked.
	ss.at = p.Attach(context.Background(), project.Face{Handle: ss.out.add, InStep: true, Notify: s.say, Asker: asker{ss: ss}})
	p.LetGoWhenIdle()
	return ss
}

// ErrBusy is a prompt sent while the session's previous one still runs.
var ErrBusy = errors.New("this session is already running a prompt; cancel it or wait for its answer")

// prompt runs one turn and answers how it stopped.
func (ss *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	msg, images, err := ss.message(blocks)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	ss.mu.Lock()
	if ss.stopRun != nil || ss.closed {
		ss.mu.Unlock()
		return sdk.PromptResponse{}, ErrBusy
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ss.stopRun, ss.stopped = cancel, false
	ss.runs.Add(1)
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.stopRun = nil
		ss.mu.Unlock()
		ss.runs.Done()
	}()
	release, news, err := ss.p.Hold()
	if err != nil {
		var le *memory.LockedError
		if errors.As(err, &le) {
			return sdk.PromptResponse{}, fmt.Errorf("not started: %s", le.Error())
		}
		return sdk.PromptResponse{}, fmt.Errorf("not started: %w", err)
	}
	defer release()
	if news != "" {
		ss.srv.say(news)
	}
	var res event.Result
	if line := commandLine(blocks); line != "" && ss.advertised(line) {
		res = ss.runCommand(ctx, line)
	} else {
		coord := ss.at.Coord
		if len(images) > 0 {
			coord.AttachImages(images)
		}
		res = coord.Run(ctx, msg)
	}
	// Every update of the turn reaches the client before its answer.
	ss.out.flush()
	ss.mu.Lock()
	stopped := ss.stopped
	ss.mu.Unlock()
	return sdk.PromptResponse{StopReason: stopReason(res, stopped || ctx.Err() != nil)}, nil
}

// commandLine is a prompt's text when it is text alone, as a slash
// command is typed ("" otherwise).
func commandLine(blocks []sdk.ContentBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text == nil {
			return ""
		}
		b.WriteString(bl.Text.Text)
	}
	return strings.TrimSpace(b.String())
}

// stopReason is how a run ended, in the protocol's words.
func stopReason(res event.Result, cancelled bool) sdk.StopReason {
	switch {
	case cancelled || res.Subtype == event.SubtypeInterrupted:
		return sdk.StopReasonCancelled
	case res.Subtype == event.SubtypeMaxTokens:
		return sdk.StopReasonMaxTokens
	case res.Subtype == event.SubtypeMaxTurns:
		return sdk.StopReasonMaxTurnRequests
	case errors.Is(res.Err, coordinator.ErrContentFilter):
		return sdk.StopReasonRefusal
	}
	return sdk.StopReasonEndTurn
}

// stop is the hard stop of the running turn (Esc in chat): the
// coordinator cancels everything in flight, its commands killed.
func (ss *session) stop(by string) {
	ss.mu.Lock()
	stopRun := ss.stopRun
	if stopRun != nil {
		ss.stopped = true
	}
	ss.mu.Unlock()
	if stopRun == nil {
		return
	}
	ss.at.Queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop, Text: by})
	stopRun()
}

// close stops the session's turn and closes its project: its MCP and
// language servers and background commands stop, its lock is released.
func (ss *session) close() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	ss.mu.Unlock()
	ss.stop("the editor went away")
	// The turn returns before the project closes under it.
	ss.runs.Wait()
	ss.at.Detach()
	if err := ss.p.Close(); err != nil {
		ss.srv.say(err.Error())
	}
	ss.out.stop()
}
