package project

import (
	"fmt"

	"github.com/ralph-dev/ralph/memory"
)

// The run settings a session saves (memory.RunConfig) name programs and
// files: the agent, its arguments, verify, the prompt template. A command
// can write .ralph/sessions/<id>/session.json (in the fallback sandbox
// .ralph/ is writable; in the default one a command may make a nested
// pkg/.ralph/), so a resume uses the saved settings only when they carry
// the seal of the person's state key (memory.Seal), which lives outside
// every project.

// seal seals st's run settings with the person's state key; without a key
// the settings stay unsealed, and a resume will not restore them.
func (p *Project) seal(st *memory.State) {
	st.Seal = ""
	if p.stateKey != nil {
		st.Seal = memory.Seal(p.stateKey, *st)
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
		return nil
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
