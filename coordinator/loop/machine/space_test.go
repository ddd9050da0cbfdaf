package machine

import (
	"slices"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// TestAFullDiskIsWaitedOutThroughEffects: an attempt a full disk cut
// short goes back to open without spending a retry or an iteration; the
// machine holds every start, asks the host to look (Look) once the time
// it said has come, keeps waiting while the host sees no space, and ends
// the wait, saying so, once it does.
func TestAFullDiskIsWaitedOutThroughEffects(t *testing.T) {
	t.Parallel()
	m := New(Config{MaxWait: time.Hour}, t0)
	f := twoTasks()
	s := m.Next(t0, f)
	a := s.Effects[0]
	if a.Kind != Start {
		t.Fatalf("first effect %v", a.Kind)
	}
	full := DiskFull{Err: "no space left on the device of /p", Again: time.Second}
	s = m.Finished(t0, f, Settle(Report{Task: a.Task, Attempt: a.Attempt, Err: "write: no space left"}).OnFullDisk(full))
	if !slices.Contains(kinds(s), Commit) || s.Effects[0].Cause != DiskCut || !slices.Equal(decisionKinds(s), []string{"limit_wait"}) {
		t.Fatalf("a full disk settled as %v %v", kinds(s), decisionKinds(s))
	}
	if w := m.Wait(); w == nil || w.Reason != memory.WaitDiskFull || m.Iterations() != 0 || m.Errors() != 0 {
		t.Fatalf("wait %+v, %d iterations, %d errors", w, m.Iterations(), m.Errors())
	}
	for _, e := range s.Effects {
		if e.Kind == Commit {
			if err := f.SetState(e.Task.ID, e.State); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s = m.Next(t0.Add(time.Second/2), f); slices.Contains(kinds(s), Start) || slices.Contains(kinds(s), Look) || s.Wait <= 0 || s.End != nil {
		t.Fatalf("before its time the wait is %+v", s)
	}
	later := t0.Add(2 * time.Second)
	if s = m.Next(later, f); slices.Contains(kinds(s), Start) || !slices.Contains(kinds(s), Look) || s.End != nil {
		t.Fatalf("at its time the wait asks no look: %+v", s)
	}
	if s = m.Space(later, false, time.Minute); len(s.Effects) != 0 || !m.Wait().Until.Equal(later.Add(time.Minute)) {
		t.Fatalf("no space yet: %+v, wait %+v", s, m.Wait())
	}
	s = m.Space(later.Add(time.Minute), true, 0)
	if m.Wait() != nil || !slices.Equal(decisionKinds(s), []string{"limit_wait_over"}) {
		t.Fatalf("space again: %v, wait %+v", decisionKinds(s), m.Wait())
	}
	if s = m.Next(later.Add(time.Minute), f); !slices.Contains(kinds(s), Start) || s.Effects[0].Attempt != 2 {
		t.Fatalf("after the wait nothing starts: %+v", s)
	}
}

// TestAFullDiskWithNoWaitFails: with --max-wait 0 a full disk fails the
// attempt as any other failure, saying why.
func TestAFullDiskWithNoWaitFails(t *testing.T) {
	t.Parallel()
	m := New(Config{}, t0)
	f := twoTasks()
	a := m.Next(t0, f).Effects[0]
	s := m.Finished(t0, f, Settle(Report{Task: a.Task, Attempt: a.Attempt, Err: "boom"}).OnFullDisk(DiskFull{Err: "the disk is full"}))
	if m.Wait() != nil || m.Errors() != 1 || len(decisionKinds(s)) != 1 {
		t.Fatalf("wait %+v, %d errors, decisions %v", m.Wait(), m.Errors(), decisionKinds(s))
	}
	if got := m.LastTry("a").Error; got != "the disk is full (ralph does not wait with --max-wait 0)" {
		t.Errorf("its retry is told %q", got)
	}
}

// TestAWriteAFullDiskRefusedHoldsStarts: a write the host could not make
// (DiskFull) starts the wait once, saying so once.
func TestAWriteAFullDiskRefusedHoldsStarts(t *testing.T) {
	t.Parallel()
	m := New(Config{MaxWait: time.Hour}, t0)
	f := planfile.ParseTasks([]byte("# Tasks\n\n- [ ] one <!-- ralph:id=a -->\n"))
	f.AssignIDs(nil)
	first := m.DiskFull(t0, DiskFull{Err: "full", Again: time.Second})
	again := m.DiskFull(t0, DiskFull{Err: "full", Again: time.Minute})
	if len(first.Effects) == 0 || len(again.Effects) != 0 || !m.Wait().Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first %v, again %v, wait %+v", kinds(first), kinds(again), m.Wait())
	}
	if s := m.Next(t0, f); slices.Contains(kinds(s), Start) || s.End != nil {
		t.Fatalf("a task started on a full disk: %+v", s)
	}
}
