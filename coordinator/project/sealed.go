package project

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// The run settings a session saves (memory.RunConfig) name programs and
// files: the agent, its arguments, verify, the prompt template. A command
// can write .ralph/sessions/<id>/session.json (in the fallback sandbox
// .ralph/ is writable; in the default one a command may make a nested
// pkg/.ralph/), so a resume uses the saved settings only when they carry
// the seal of the person's state key (memory.Seal), which lives outside
// every project.

//
// A seal alone says only that ralph once wrote the settings, and a command
// could put back an older record ralph sealed (a copy taken before the
// person added --verify). So each record carries its generation under the
// seal, and ralph's state directory keeps each session's latest
// (memory.Generations): a resume refuses a sealed record older than that
// in one sentence and sets it aside, as a damaged record is. ralph resume
// with no session named takes the latest session as it would (the
// freshness of a record is not what picks it, memory.LatestSealed) and
// then refuses that record if it is stale, rather than pass over to an
// older session: a record put back is the sign of a command at work on
// that very session, which the person must hear of, and continuing
// another session instead would be a surprise of its own.

// seal seals a new session's first record with the person's state key;
// without a key the settings stay unsealed, and a resume will not restore
// them.
func (p *Project) seal(st *memory.State) {
	st.Seal, st.Generation = "", 0
	if p.stateKey != nil {
		memory.SealNew(p.stateKey, st)
	}
}

// findResumable is the session a resume continues: the one named, else
// the latest one whose settings ralph sealed, saying which newer ones it
// passed over.
func (p *Project) findResumable(opts Options) (string, error) {
	if opts.SessionID != "" {
		return memory.FindSession(p.Fs, p.Root, opts.SessionID)
	}
	if p.stateKey == nil {
		id, err := memory.FindSession(p.Fs, p.Root, "")
		if err != nil {
			return id, err
		}
		return p.passUnreached(id, opts.Notify), nil
	}
	id, skipped, err := memory.LatestSealed(p.Fs, p.Root, p.stateKey)
	for _, s := range skipped {
		if s > id {
			opts.Notify(fmt.Sprintf("skipped session %s: its saved settings carry no seal of yours (saved by an older ralph, or written by a command)", s))
		}
	}
	if err != nil {
		return id, err
	}
	return p.passUnreached(id, opts.Notify), nil
}

// passUnreached is the session -c continues in place of id, the latest,
// when id never reached its model (memory.SessionUnreached: a wrong
// --base-url, a server down): the newest conversation before it that
// had an exchange, said in one line with id's prompt, which stays in id
// for ralph --resume. With none before it, id itself goes on, its prompt
// sent again ahead of the new one, also said: nothing the person typed is
// lost either way.
func (p *Project) passUnreached(id string, notify func(string)) string {
	prompt, unreached := memory.SessionUnreached(p.Fs, p.Root, id)
	if !unreached {
		return id
	}
	ids, _ := memory.ListSessions(p.Fs, p.Root)
	for k := len(ids) - 1; k >= 0; k-- {
		o := ids[k]
		if o >= id || memory.SessionEmpty(p.Fs, p.Root, o) {
			continue
		}
		if _, un := memory.SessionUnreached(p.Fs, p.Root, o); un {
			continue
		}
		if st, err := memory.LoadSessionState(p.Fs, p.Root, o); err != nil || p.stateKey != nil && memory.CheckSeal(p.stateKey, st) != nil {
			continue
		}
		notify(fmt.Sprintf("session %s never reached its model, so %s has no answer (ralph --resume %s sends it again); continuing session %s, the one before it",
			id, memory.QuotePrompt(prompt), id, o))
		return o
	}
	notify(fmt.Sprintf("session %s never reached its model; continuing it, with its unanswered prompt %s", id, memory.QuotePrompt(prompt)))
	return id
}

// trustSaved checks the seal of a resumed session's settings. Settings
// that name a program or a file, or loosen anything, are refused with one
// sentence; so is a task loop (loop) with no sealed settings at all, whose
// record was lost or damaged: its defaults would be looser than what the
// person chose (no verify, no limits). Another session that saved none
// goes on with the defaults, said once. An unsealed state keeps nothing
// ralph would act on: its run settings and its model are dropped.
//
// sealedAs is the id the settings were sealed under: the session's own,
// or for a fork the session it copies.
func (p *Project) trustSaved(st *memory.State, sealedAs string, loop bool, notify func(string)) error {
	var err error
	as := *st
	as.SessionID = sealedAs
	if p.stateKey == nil {
		err = fmt.Errorf("ralph has no state key to check them with: %v", p.keyErr)
	} else if err = memory.CheckSeal(p.stateKey, as); err == nil {
		return p.checkFresh(st, sealedAs)
	}
	if st.Run != nil {
		return usageErr{fmt.Errorf("the saved settings of session %s were changed outside ralph (%w); start it again with the flags you want: ralph run --agent … --verify …", st.SessionID, err)}
	}
	if loop {
		return usageErr{fmt.Errorf("the task loop of session %s cannot go on: its saved settings (agent, verify, limits) cannot be restored (%w), and going on with the defaults could skip a check you asked for; start it again with the flags you want: ralph run --agent … --verify …", st.SessionID, err)}
	}
	notify(fmt.Sprintf("session %s has no settings sealed by ralph for you (%v); it goes on with the defaults", st.SessionID, err))
	st.Run, st.Model = nil, ""
	return nil
}

// checkFresh refuses st, a record sealed under sealedAs (its own session,
// or for a fork the session it copies), when it is older than the last
// record ralph sealed for that session: it is set aside (renamed, never
// deleted) and the resume stops with one sentence, whatever the session
// is, since the settings a command put back are the ones it chose. A
// store that cannot be read is refused the same way: freshness that
// cannot be shown is not assumed.
func (p *Project) checkFresh(st *memory.State, sealedAs string) error {
	if p.gens == nil {
		return nil
	}
	err := p.gens.CheckFresh(sealedAs, st.Generation)
	if err == nil {
		return nil
	}
	if !errors.Is(err, memory.ErrStale) {
		return usageErr{fmt.Errorf("ralph cannot tell whether the saved record of session %s is the last one it wrote (%w), so it does not go on with its settings; start it again with the flags you want: ralph run --agent … --verify …", sealedAs, err)}
	}
	own := filepath.Join(memory.SessionDir(p.Root, sealedAs), "session.json")
	kept := ""
	if aside, aerr := memory.SetAside(p.Fs, own, time.Now()); aerr == nil {
		if rel, rerr := filepath.Rel(p.Root, aside); rerr == nil {
			kept = " (kept as " + filepath.ToSlash(rel) + ")"
		}
	}
	return usageErr{fmt.Errorf("the saved record of session %s was put back by something other than ralph: %w%s, so its settings (agent, verify, limits) may not be the ones you last gave; start it again with the flags you want: ralph run --agent … --verify …", sealedAs, err, kept)}
}
