package project

import (
	"errors"
	"fmt"
	"github.com/ralph-dev/ralph/coordinator/event"
	"path/filepath"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// A new, resumed or forked session, settled under the lock (Open).

// start creates a new session, durable before anything else happens.
func (p *Project) start(opts Options) error {
	p.Mode = opts.Mode
	run, err := p.settle(opts, nil)
	if err != nil {
		return err
	}
	id := memory.NewID(time.Now())
	// A model with a known price has cost nothing yet; null means unknown.
	// Saying so now spares the run's first save a change to write.
	var cost *float64
	if p.PriceOf(p.Config.Model) != nil {
		cost = new(float64)
	}
	// The session is recorded only once the .gitignore of a .ralph/ its
	// lock made is durable.
	create := memory.CreateOptions{After: p.Lock.StateDirDurable}
	if runsOnce(p.Mode) {
		// A one-shot's record becomes durable beside its first request,
		// which changes nothing; every tool that may change a file waits
		// for it (the checkpoint tracker's placed gate, Checkpoints.Before), as every save does.
		create.Beside, p.placing = true, true
	}
	st := memory.State{
		SessionID: id, Status: memory.StatusRunning, Mode: p.Mode, Model: p.Config.Model, StartedAt: time.Now().UTC(), Run: run, CostUSD: cost,
	}
	p.seal(&st)
	s, err := memory.CreateSessionWith(p.Fs, p.Root, id, st, create, p.secrets()...)
	if err != nil {
		return fmt.Errorf("cannot record the session under %s: %w", p.Root, err)
	}
	if p.Mode == ModeReview {
		// A review sends no prompt of the person's for the session's
		// directory to wait for (memory.CreateSessionBeside).
		s.Place()
	}
	s.SealWith(p.stateKey, p.gens)
	p.Session = s
	return nil
}

// resume reopens a session, settles its mode and configuration, and
// repairs its history for the model.
func (p *Project) resume(opts Options) error {
	id, sealedAs, err := p.resumed(opts)
	if err != nil {
		return err
	}
	s, msgs, err := memory.OpenSession(p.Fs, p.Root, id, p.secrets()...)
	if err != nil {
		return err
	}
	prior := s.State()
	if prior.Mode == "" {
		// A record rebuilt from the logs does not say what the session
		// was; its events do.
		prior.Mode = p.sessionMode(prior, id)
	}
	loop := opts.Mode == ModeRun || opts.Mode == "" && prior.Mode == ModeRun
	if r := s.Repaired; r != nil && r.Restored == "" && loop {
		// Its defaults would be looser than what the person chose.
		_ = s.Close()
		return usageErr{fmt.Errorf("the task loop of session %s cannot go on: %s, and no other copy holds the settings it saved (agent, verify, limits), so going on could skip a check you asked for; start it again with the flags you want: ralph run --agent … --verify …", id, r.Record())}
	} else if r != nil {
		opts.Notify(r.Sentence(id))
	}
	if err := memory.PromptMissing(p.Fs, p.Root, id, prior, msgs); err != nil && !opts.ForkSession {
		// A conversation whose prompt was never saved has nothing for the
		// model to go on with (issue 67).
		_ = s.Close()
		return err
	}
	if s.Hole != nil {
		// A conversation that lost a message in its middle is not the
		// one the model had: going on would answer from a history that
		// never was.
		_ = s.Close()
		return s.Hole
	}
	for _, l := range s.LinksDropped {
		opts.Notify(fmt.Sprintf("%s was a symbolic link, which a command may have planted; ralph removed it, followed nothing, and starts that log again", filepath.ToSlash(l)))
	}
	if err := p.trustSaved(&prior, sealedAs, loop, opts.Notify); err != nil {
		_ = s.Close()
		return err
	}
	s.SealWith(p.stateKey, p.gens)
	p.PriorStatus = prior.Status
	p.Mode = opts.Mode
	if p.Mode == "" {
		p.Mode = p.sessionMode(prior, id)
	}
	// The model a session was started with goes on unless this command
	// line or the environment names another.
	// The provider follows it where nothing else names one (a claude-…
	// model is Anthropic's), so the provider is resolved again.
	if prior.Model != "" && !opts.Overrides.gives("model") && opts.Getenv("RALPH_MODEL") == "" {
		p.Config.SetModel(prior.Model)
		if err := p.Config.Resolve(); err != nil {
			return err
		}
	}
	run, err := p.settle(opts, prior.Run)
	if err != nil {
		return err
	}
	var started map[string]bool
	if memory.Unanswered(msgs) {
		if started, err = startedCalls(p.Fs, p.Root, id); err != nil {
			return err
		}
	}
	repaired, synthetic := memory.RepairHistory(msgs, started)
	if err := s.AppendMessages(synthetic...); err != nil {
		return err
	}
	p.History, p.Session, p.Resumed = repaired, s, true
	return s.SaveState(func(st *memory.State) {
		st.Status = memory.StatusRunning
		st.Mode = p.Mode
		st.Model = p.Config.Model
		if run != nil {
			st.Run = run
		}
		st.EndedAt = time.Time{}
		st.Error = ""
	})
}

// resumed is the id of the session a resume continues (a fork's copy
// for --fork-session) and the id its settings were sealed under.
func (p *Project) resumed(opts Options) (id, sealedAs string, err error) {
	id, err = p.findResumable(opts)
	if p.unfinished != "" && opts.SessionID == "" {
		// The last ralph was stopped, or could not write, before its
		// session counted as one: -c goes on with the one before it, if
		// any, and says so.
		if errors.Is(err, memory.ErrNoSession) {
			return "", "", memory.NoSessionf("this project has no session to continue: the session for %s was never recorded (ralph was stopped, or could not write it); send that prompt again to start one", memory.QuotePrompt(p.unfinished))
		}
		if err == nil {
			opts.Notify(fmt.Sprintf("the session for %s was never recorded (ralph was stopped, or could not write it); continuing session %s, the one before it", memory.QuotePrompt(p.unfinished), id))
		}
	}
	if err != nil {
		return "", "", err
	}
	// A fork carries the settings of the session it copies, sealed
	// under that session's id.
	sealedAs = id
	if opts.ForkSession {
		// A conversation whose prompt was never saved has nothing for
		// the model to go on with, nor for a copy to begin with (issue 67).
		msgs, lerr := memory.LoadMessages(p.Fs, memory.SessionDir(p.Root, id))
		st, _ := memory.LoadSessionState(p.Fs, p.Root, id)
		if lerr == nil {
			if err := memory.PromptMissing(p.Fs, p.Root, id, st, msgs); err != nil {
				return "", "", err
			}
		}
		if id, err = p.fork(id); err != nil {
			return "", "", err
		}
	}
	return id, sealedAs, nil
}

// sessionMode is the mode a session was started in. A session whose own
// record was lost (written by an older ralph, or damaged) is a task loop
// if it left tasks in progress or its events show task changes.
func (p *Project) sessionMode(st memory.State, id string) string {
	if st.Mode != "" {
		return st.Mode
	}
	if p.recovered.Count() > 0 {
		return ModeRun
	}
	mode := ModeOneShot
	_, _ = memory.EachJSONL(p.Fs, memory.LogPath(p.Root, id, memory.EventsLog), event.Marks(event.TaskChanged),
		func(ev event.Event) {
			if ev.Type == event.TaskChanged {
				mode = ModeRun
			}
		})
	return mode
}

// startedCalls lists the tool calls a session began executing, from its
// events: a call with a tool_call event but no result may have had effects.
// The log is streamed, and only its tool_call lines are decoded: a long
// run's events.jsonl is tens of megabytes, and a resume needs no more of
// it than this.
func startedCalls(fs afero.Fs, root, id string) (map[string]bool, error) {
	started := map[string]bool{}
	_, err := memory.EachJSONL(fs, memory.LogPath(root, id, memory.EventsLog), event.Marks(event.ToolCall),
		func(ev event.Event) {
			if ev.Type == event.ToolCall && ev.ToolID != "" {
				started[ev.ToolID] = true
			}
		})
	if err != nil {
		return nil, err
	}
	return started, nil
}

// Prior is the resumed session's saved state, or nil for a new session.
func (p *Project) Prior() *memory.State {
	if !p.Resumed {
		return nil
	}
	st := p.Session.State()
	return &st
}

// fork copies session from into a new session (--fork-session) and
// returns the copy's id, which is resumed in its place: the original is
// only read.
func (p *Project) fork(from string) (string, error) {
	id := memory.NewID(time.Now())
	if err := memory.ForkSession(p.Fs, p.Root, from, id); err != nil {
		return "", err
	}
	return id, nil
}
