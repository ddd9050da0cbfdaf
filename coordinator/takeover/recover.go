package takeover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// Recovery is what recovering a project found, and what it worked on.
type Recovery struct {
	Fs   afero.Fs
	Root string
	// Lock is the project's lock, held.
	Lock *memory.Lock
	// Recovered is what recovery did with the tasks a ralph that is gone
	// left in progress.
	Recovered planfile.Recovered
	// Unfinished is the prompt of a session a crash left half made,
	// which recovery removed (memory.UnfinishedPrompt); "" for none.
	Unfinished string
}

// Recover runs with the lock held, so no live ralph owns the project. A
// session.json that still says "running" was therefore left by a ralph
// that died without saving: it becomes "interrupted", its in-progress tasks
// are settled by planfile.RecoverInProgress (done when their progress entry
// was written or their commit landed, open otherwise), and the user hears
// so in one line. A corrupt session.json is set aside (never deleted) and
// rebuilt from the newest session's own records.
func Recover(fs afero.Fs, root string, lock *memory.Lock, notify func(string)) (*Recovery, error) {
	p := &Recovery{Fs: fs, Root: root, Lock: lock}
	return p, p.recover(notify)
}

// recover is Recover's work on p.
func (p *Recovery) recover(notify func(string)) error {
	// Under the lock no other ralph works here, so a task marked in
	// progress belongs to a ralph that is gone, whatever session.json
	// says (a crash can come before its first save). Settle them first.
	landed := p.taskLanded()
	if _, err := planfile.UpdateTasks(p.Fs, p.Root, func(f *planfile.TaskFile) error {
		rec, err := planfile.RecoverInProgress(p.Fs, p.Root, f, landed)
		p.Recovered = rec
		return err
	}); err != nil && !errors.Is(err, os.ErrNotExist) {
		p.Recovered = planfile.Recovered{}
		return fmt.Errorf("settle in-progress tasks after a crash: %w", err)
	}
	names := memory.SessionDirNames(p.Fs, p.Root)
	// What a half-made session was asked, so that -c can say it was not
	// run (resume); the session itself never counted as one.
	p.Unfinished = memory.UnfinishedPrompt(p.Fs, p.Root, names)
	if err := memory.RemoveUnfinishedSessions(p.Fs, p.Root, names); err != nil {
		return fmt.Errorf("remove a session record a crash left half made: %w", err)
	}
	now := time.Now().UTC()
	// By the sessions' own records: a crash of the machine may have left
	// the summary behind them.
	st, err := memory.RecordedState(p.Fs, p.Root, names)
	switch {
	case errors.Is(err, memory.ErrNoSession):
		p.noteReset(notify)
		return nil
	case errors.Is(err, memory.ErrCorruptState):
		path := filepath.Join(p.Root, memory.SessionFile)
		aside, aerr := memory.SetAside(p.Fs, path, now)
		if aerr != nil {
			return fmt.Errorf("%w; and it could not be set aside: %w", err, aerr)
		}
		rebuilt, rerr := p.rebuildState(now)
		if rerr != nil {
			notify(fmt.Sprintf("warning: %s was corrupt; kept it as %s (nothing to rebuild it from: %v)", memory.SessionFile, filepath.Base(aside), rerr))
			p.noteReset(notify)
			return nil
		}
		notify(fmt.Sprintf("warning: %s was corrupt; kept it as %s and rebuilt the state of session %s from its own records", memory.SessionFile, filepath.Base(aside), rebuilt.SessionID))
		st = rebuilt
	case err != nil:
		return err
	}
	if st.Run != nil && st.Run.Plan != "" {
		// The session worked a plan file of its own: its tasks in
		// progress are the dead ralph's too.
		if tr, err := planfile.OpenTracker(p.Fs, p.Root, st.Run.Plan); err == nil {
			var rec planfile.Recovered
			if _, err := tr.Update(func(f *planfile.TaskFile) (err error) {
				rec, err = planfile.RecoverInProgress(p.Fs, p.Root, f, landed)
				return err
			}); err == nil {
				p.Recovered.Done = append(p.Recovered.Done, rec.Done...)
				for id, c := range rec.Landed {
					if p.Recovered.Landed == nil {
						p.Recovered.Landed = map[string]string{}
					}
					p.Recovered.Landed[id] = c
				}
				p.Recovered.Reopened = append(p.Recovered.Reopened, rec.Reopened...)
			}
		}
	}
	if !memory.Active(st.Status) {
		p.noteReset(notify)
		return nil
	}
	return p.markCrashed(st, now, notify)
}

// noteReset tells the person about tasks settled outside a crashed
// session's recovery (which reports them itself).
func (p *Recovery) noteReset(notify func(string)) {
	var parts []string
	if n := len(p.Recovered.Reopened); n > 0 {
		parts = append(parts, fmt.Sprintf("reset %s a ralph that is gone left in progress", text.Counted(n, "task", "tasks")))
	}
	if done := p.doneWords(); done != "" {
		parts = append(parts, done+", left in progress by a ralph that is gone")
	}
	if len(parts) > 0 {
		notify("recovered: " + strings.Join(parts, "; "))
	}
}

// doneWords says which tasks in progress recovery marked done: "marked t2
// done (its progress entry was written)"; "" when none.
func (p *Recovery) doneWords() string {
	done := p.Recovered.Done
	if len(done) == 0 {
		return ""
	}
	was := "its progress entry was written"
	if len(done) > 1 {
		was = "their progress entries were written"
	}
	if len(p.Recovered.Landed) > 0 {
		// The commits that told, not the entries written from them.
		var from []string
		for _, id := range done {
			if c := p.Recovered.Landed[id]; c != "" {
				from = append(from, id+" "+c[:min(12, len(c))])
			}
		}
		was = "their progress entries were written, or their commits landed: " + strings.Join(from, ", ")
		if len(done) == 1 {
			c := p.Recovered.Landed[done[0]]
			was = "its commit " + c[:min(12, len(c))] + " landed"
		}
	}
	return fmt.Sprintf("marked %s done (%s)", strings.Join(done, ", "), was)
}

// taskLanded is recovery's look at git for a task left in progress
// (planfile.LandedFunc): the commit of its last attempt on the project's
// branch, by its trailers (git.TaskLanded). A task worktree's commit on
// its branch, whose merge the crash cut off, is merged first (MergeBranch
// is idempotent and moves the branch only if nobody moved it): the work
// was done and verified, and reopening the task would do it again. A
// merge that cannot be made is an error, as an unreadable progress file
// is. Outside git there is nothing to look at: the lookup says "". The
// repository is opened only when a task in progress asks.
func (p *Recovery) taskLanded() planfile.LandedFunc {
	var (
		repo   *git.Repo
		opened bool
	)
	return func(t planfile.Task) (string, error) {
		ctx := context.Background()
		if !opened {
			opened = true
			if r, err := git.Open(ctx, p.Root); err == nil {
				repo = r
			}
		}
		if repo == nil {
			return "", nil
		}
		l, err := repo.TaskLanded(ctx, t.ID, t.Attempts)
		switch {
		case err != nil:
			return "", err
		case l.Branch == "" || l.Reverted != "":
			if l.Done() {
				return l.Commit, nil
			}
			return "", nil
		}
		trailers, err := git.TaskTrailers(t.ID, t.Attempts)
		if err != nil {
			return "", err
		}
		msg := fmt.Sprintf("Merge %s: %s\n\nralph merged this task's branch when it recovered from a crash.\n\n%s", l.Branch,
			strings.TrimSpace(text.StripControls(t.Title)), trailers)
		res, err := repo.MergeBranch(ctx, l.Branch, msg)
		if err != nil {
			return "", fmt.Errorf("task %s's commit %s is on the branch %s, which could not be merged (merge it, then run again): %w",
				t.ID, l.BranchCommit[:min(12, len(l.BranchCommit))], l.Branch, err)
		}
		return res.Commit, nil
	}
}

// rebuildState restores .ralph/session.json from the newest session's
// directory: its own session.json copy, or, if that is gone too, what its
// conversation log shows.
func (p *Recovery) rebuildState(now time.Time) (memory.State, error) {
	id, err := memory.FindSession(p.Fs, p.Root, "")
	if err != nil {
		return memory.State{}, err
	}
	s, _, err := memory.OpenSession(p.Fs, p.Root, id)
	if err != nil {
		return memory.State{}, err
	}
	defer s.Close()
	if err := s.SaveState(func(st *memory.State) {
		if st.Recovered == "" {
			st.Recovered = "state rebuilt from the session's records after .ralph/session.json was found corrupt at " + now.Format(time.RFC3339)
		}
	}); err != nil {
		return memory.State{}, err
	}
	return s.State(), nil
}

func (p *Recovery) markCrashed(st memory.State, now time.Time, notify func(string)) error {
	s, msgs, err := memory.OpenSession(p.Fs, p.Root, st.SessionID)
	if err != nil {
		// The session's directory is gone: only the summary remains to fix.
		// Recorded, as every new session is, only once a .gitignore the
		// lock wrote is durable.
		s, err = memory.CreateSessionWith(p.Fs, p.Root, st.SessionID, st, memory.CreateOptions{After: p.Lock.StateDirDurable})
		if err != nil {
			return err
		}
	}
	defer s.Close()
	reset := len(p.Recovered.Reopened)
	how := "ralph stopped without saving (killed or crashed)"
	if prev, ok := p.Lock.Previous(); ok && prev.PID != 0 {
		how = fmt.Sprintf("ralph (pid %d) stopped without saving (killed or crashed)", prev.PID)
	}
	note := fmt.Sprintf("%s; last saved %s; marked interrupted at %s", how, st.UpdatedAt.Format(time.RFC3339), now.Format(time.RFC3339))
	if reset > 0 {
		note += fmt.Sprintf("; %s reset to open", text.Counted(reset, "in-progress task", "in-progress tasks"))
	}
	if done := p.doneWords(); done != "" {
		note += "; " + done
	}
	_ = s.AppendLog(memory.DecisionsLog, memory.DecisionRecord{Time: now, Kind: "recovered", Detail: note,
		Reason: "the session says it runs, but the ralph that ran it is gone; it is marked interrupted so ralph resume can go on from its last save"})
	if err := s.SaveState(func(x *memory.State) {
		x.Status = memory.StatusInterrupted
		x.Recovered = note
		x.EndedAt = now
	}); err != nil {
		return err
	}
	msg := fmt.Sprintf("recovered: session %s was left running by a ralph that is gone; marked it interrupted", st.SessionID)
	if reset > 0 {
		msg += fmt.Sprintf(" and reset %s", text.Counted(reset, "in-progress task", "in-progress tasks"))
	}
	if done := p.doneWords(); done != "" {
		msg += "; " + done
	}
	if memory.PromptMissing(p.Fs, p.Root, st.SessionID, st, msgs) != nil {
		// Nothing continues a conversation whose prompt was never saved
		// (resume says so, and what the prompt was).
		notify(msg)
		return nil
	}
	notify(msg + "; `ralph resume` continues it")
	return nil
}
