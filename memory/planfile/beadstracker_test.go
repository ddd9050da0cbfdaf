package planfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/beads"
)

// TestBeadsPlanNames: "beads" is every issue, "beads:ID" an epic's.
func TestBeadsPlanNames(t *testing.T) {
	for plan, want := range map[string]string{"beads": "", "beads:rt-1": "rt-1"} {
		if epic, ok := BeadsEpic(plan); !ok || epic != want || BeadsPlanName(epic) != plan {
			t.Errorf("%s: %q %v", plan, epic, ok)
		}
	}
	for _, plan := range []string{"beads:", "RALPH_TASKS.md", "docs/beads.md", ""} {
		if _, ok := BeadsEpic(plan); ok {
			t.Errorf("%q read as a Beads plan", plan)
		}
	}
}

// TestBeadsViewOfRecordedList: real bd output of an epic reads as
// ralph's tasks: the epic left out, ids made task ids, the blocking
// dependency among the tasks kept, a claim of this ralph's and a closed
// task seen as such.
func TestBeadsViewOfRecordedList(t *testing.T) {
	read := func(name string) []beads.Issue {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "beads", name))
		if err != nil {
			t.Fatal(err)
		}
		is, err := beads.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		return is
	}
	all, ready := read("list.json"), read("ready.json")
	b := &beadsSource{bd: &beads.Client{Actor: recordedActor}}
	tasks := b.view(all, ready)
	if len(tasks) != 3 {
		t.Fatalf("%d tasks: %+v", len(tasks), tasks)
	}
	byTitle := map[string]sourceTask{}
	for _, st := range tasks {
		byTitle[st.Title] = st
	}
	schema, reads := byTitle["schema"], byTitle["reads"]
	if !slices.Equal(reads.Depends, []string{schema.ID}) {
		t.Errorf("reads depends on %v, want %s", reads.Depends, schema.ID)
	}
	if !schema.Claimed || !schema.Mine {
		t.Errorf("schema, claimed by ralph in the recording: %+v", schema)
	}
	if !byTitle["writes"].Done {
		t.Errorf("writes, closed in the recording: %+v", byTitle["writes"])
	}
}

// recordedActor is the actor testdata/beads was recorded as.
const recordedActor = "ralph:/tmp/beads-record"

// fakeClaims is a claimSource in memory, for the view tracker's part of
// claims: which calls an update makes.
type fakeClaims struct {
	tasks    []sourceTask
	taken    map[string]bool // claims another worker wins
	calls    []string
	closedBy map[string]string
	notes    map[string]string
}

func (f *fakeClaims) read() ([]sourceTask, error) { return slices.Clone(f.tasks), nil }

func (f *fakeClaims) set(id string, fn func(*sourceTask)) {
	for i := range f.tasks {
		if f.tasks[i].ID == id {
			fn(&f.tasks[i])
		}
	}
}

func (f *fakeClaims) markDone(done map[string]bool) error {
	for id, d := range done {
		f.calls = append(f.calls, "close "+id+" "+f.notes[id])
		f.set(id, func(t *sourceTask) { t.Done, t.Claimed = d, false })
	}
	return nil
}

func (f *fakeClaims) claim(id string) error {
	f.calls = append(f.calls, "claim "+id)
	if f.taken[id] {
		return ErrTaskTaken
	}
	f.set(id, func(t *sourceTask) { t.Claimed, t.Mine = true, true })
	return nil
}

func (f *fakeClaims) release(id, why string) error {
	f.calls = append(f.calls, "release "+id)
	f.set(id, func(t *sourceTask) { t.Claimed, t.Mine = false, false })
	return nil
}

func (f *fakeClaims) noteDone(id, note string) {
	if f.notes == nil {
		f.notes = map[string]string{}
	}
	f.notes[id] = note
}

// TestClaimingViewTracker: starting a task claims it, a lost claim is
// ErrTaskTaken with nothing written, putting a task back releases only
// this ralph's claim, and done closes it with the noted reason.
func TestClaimingViewTracker(t *testing.T) {
	fs := afero.NewMemMapFs()
	src := &fakeClaims{tasks: []sourceTask{{ID: "a", Title: "a"}, {ID: "b", Title: "b"}, {ID: "c", Title: "c", Claimed: true}}, taken: map[string]bool{"b": true}}
	v := &viewTracker{fs: fs, root: "/p", name: "beads:e", src: src}
	start := func(id string) error {
		_, err := v.Update(func(f *TaskFile) error { return f.StartAttempt(id, 1) })
		return err
	}
	if err := start("a"); err != nil {
		t.Fatal(err)
	}
	if err := start("b"); !errors.Is(err, ErrTaskTaken) {
		t.Fatalf("a lost claim: %v", err)
	}
	if side := v.readSidecar(); side["b"].Attempts != 0 || side["a"].Attempts != 0 || side["a"].State != "" {
		t.Errorf("sidecar after the claims: %+v", side)
	}
	// Recovery reopens every task in progress without an entry: only a's
	// claim is ralph's.
	if _, err := v.Update(func(f *TaskFile) error { _, err := RecoverInProgress(fs, "/p", f, nil); return err }); err != nil {
		t.Fatal(err)
	}
	if err := start("a"); err != nil {
		t.Fatal(err)
	}
	v.NoteDone("a", "committed as abc")
	if _, err := v.Update(func(f *TaskFile) error { return f.SetState("a", TaskDone) }); err != nil {
		t.Fatal(err)
	}
	// c, claimed by another worker, picked from an older read: starting
	// it is refused, not taken as started.
	if err := start("c"); !errors.Is(err, ErrTaskTaken) {
		t.Fatalf("starting a task another worker holds: %v", err)
	}
	want := []string{"claim a", "claim b", "release a", "claim a", "close a committed as abc"}
	if !slices.Equal(src.calls, want) {
		t.Errorf("calls %q, want %q", src.calls, want)
	}
	f, err := v.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Counts(); c.Done != 1 || c.InProgress != 1 || c.Open != 1 {
		t.Errorf("counts %+v", c)
	}
}
