package project

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/memory/text"
)

// idleLock is the project lock as a chat holds it: only while work runs
// (a conversation run, the task loop, an undo), so that beside a chat
// waiting at its prompt another ralph — a one-shot, `ralph undo` — may
// work in the project. Faces that work from start to end (a one-shot,
// `ralph run`) never let it go.
type idleLock struct {
	mu sync.Mutex
	// holds counts the work running; the lock is let go when it drops
	// to zero, if letGo.
	holds int
	letGo bool
	// free says the lock is released; stamp is the work tree as it was
	// then, to tell the next work what changed meanwhile.
	free  bool
	stamp checkpoint.TreeStamp
}

// LetGoWhenIdle makes the lock held only while work runs (Hold): from now
// on, whenever nothing runs, the project is free for another ralph. The
// chat calls it once its shell is up.
func (p *Project) LetGoWhenIdle() {
	p.idle.mu.Lock()
	defer p.idle.mu.Unlock()
	p.idle.letGo = true
	if p.idle.holds == 0 {
		p.letGoLocked()
	}
}

// Hold marks work that starts: it takes the lock back if the project was
// let go, and release marks the work's end (it may be called more than
// once). When another ralph took the project meanwhile, err is its
// *memory.LockedError (errors.Is memory.ErrLocked) and nothing is held.
// news is one line for the person when files changed while the project
// was let go; the model hears of them with its next prompt.
func (p *Project) Hold() (release func(), news string, err error) {
	p.idle.mu.Lock()
	defer p.idle.mu.Unlock()
	if p.idle.free {
		if err := p.Lock.Reacquire(); err != nil {
			return nil, "", fmt.Errorf("take the project back: %w", err)
		}
		p.idle.free = false
		if p.Lock.Info().SessionID != p.Session.ID {
			// /clear moved on to a new session while the lock was let go.
			_ = p.Lock.SetSession(p.Session.ID)
		}
		news = p.noteChanges(p.idle.stamp.Changes(p.tracker().Stamp()))
		p.idle.stamp = nil
		if _, crashed := p.Lock.Previous(); crashed {
			news = joinNews(news, p.recoverBeside())
		}
	}
	p.idle.holds++
	return sync.OnceFunc(p.unhold), news, nil
}

// unhold ends one piece of work, and lets the project go once none runs.
func (p *Project) unhold() {
	p.idle.mu.Lock()
	defer p.idle.mu.Unlock()
	p.idle.holds--
	if p.idle.holds == 0 && p.idle.letGo {
		p.letGoLocked()
	}
}

// letGoLocked releases the lock while nothing runs; the caller holds
// p.idle.mu. The session is first saved as not running — a chat at its
// prompt runs nothing — or the next ralph's recovery would take it for
// one that crashed and mark it interrupted. The work tree is stamped
// before the release, so every change after it is someone else's.
func (p *Project) letGoLocked() {
	if p.idle.free {
		return
	}
	p.CloseConversation()
	p.idle.stamp = p.tracker().Stamp()
	if err := p.Lock.Release(); err != nil {
		// The file could not be removed; the flock is dropped anyway,
		// so the next ralph takes the file over as stale.
		p.warnLater(err)
	}
	p.idle.free = true
}

// warnLater tells the person of a failure beside the conversation, if one
// runs, else nowhere: nothing is lost by it.
func (p *Project) warnLater(err error) {
	if c := p.warnTo.Load(); c != nil {
		c.Warn(err.Error())
	}
}

// recoverBeside recovers, as Open does, after a ralph that crashed while
// the chat let the project go: its tasks in progress go back to open and
// its session is marked interrupted. It returns what the person is told.
func (p *Project) recoverBeside() string {
	var notes []string
	if err := p.recover(func(s string) { notes = append(notes, s) }); err != nil {
		notes = append(notes, "recovery after a ralph that crashed beside this chat failed: "+err.Error())
	}
	return strings.Join(notes, "; ")
}

// joinNews puts two lines for the person into one.
func joinNews(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// changesShown bounds the files named in the note and the line.
const changesShown = 20

// noteChanges tells the conversation's model which files changed while
// the project was let go, and returns the line for the person ("" when
// nothing changed).
func (p *Project) noteChanges(changed []string) string {
	if len(changed) == 0 {
		return ""
	}
	names := changed
	more := ""
	if len(names) > changesShown {
		names, more = names[:changesShown], fmt.Sprintf(" and %d more", len(changed)-changesShown)
	}
	list := strings.Join(names, ", ") + more
	if p.coord != nil {
		p.coord.AddNote(fmt.Sprintf("[ralph: while this chat waited at its prompt, another ralph or a person changed %s in the project: %s. Read them again before relying on what you saw of them.]",
			text.Counted(len(changed), "file", "files"), list))
	}
	return text.OneLine(fmt.Sprintf("changed while the chat waited (by another ralph or by you): %s", list))
}

// Holding reports whether this ralph holds the project lock now: a chat
// at its idle prompt has let it go (LetGoWhenIdle).
func (p *Project) Holding() bool {
	p.idle.mu.Lock()
	defer p.idle.mu.Unlock()
	return !p.idle.free
}
