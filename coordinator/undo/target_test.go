package undo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// TestLastInPlace: the latest change no undo took back; an undo of an
// undo puts its change back in place; a step undone alone stays out of
// its request.
func TestLastInPlace(t *testing.T) {
	turn := func(ref string, turn, request int) git.Entry {
		return git.Entry{Kind: git.KindTurn, Turn: turn, Request: request, Checkpoint: git.Checkpoint{Ref: ref, Commit: ref}}
	}
	undo := func(ref string, undone ...string) git.Entry {
		return git.Entry{Kind: git.KindUndo, Undone: strings.Join(undone, " "), Checkpoint: git.Checkpoint{Ref: ref, Commit: ref}}
	}
	refs := func(es []git.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Ref)
		}
		return out
	}
	base := []git.Entry{{Kind: git.KindBaseline, Checkpoint: git.Checkpoint{Ref: "b", Commit: "b"}}, turn("t1", 1, 1), turn("t2", 2, 1), turn("t3", 3, 3)}
	for _, c := range []struct {
		name string
		log  []git.Entry
		want []string
	}{
		{"none undone", base, []string{"t3"}},
		{"the last undone", append(slices.Clone(base), undo("u1", "t3")), []string{"t1", "t2"}},
		{"all undone", append(slices.Clone(base), undo("u1", "t3"), undo("u2", "t1", "t2")), nil},
		{"an undo undone", append(slices.Clone(base), undo("u1", "t3"), undo("u2", "u1")), []string{"t3"}},
		{"one step undone", append(slices.Clone(base[:3]), undo("u1", "t2")), []string{"t1"}},
	} {
		if got := refs(lastInPlace(c.log)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if _, what := pick(c.log, Selection{inPlace: true}); c.name == "the last undone" && what != "your earlier request (steps 1-2)" ||
			c.name == "none undone" && what != "your last request (step 3)" {
			t.Errorf("%s: said as %q", c.name, what)
		}
	}
}

// TestPickTargetTakesTheNewestChangeInPlace: of two sessions, the one
// whose change still in place is newest, whatever their ids' order; with
// every change undone, nothing, in the caller's words.
func TestPickTargetTakesTheNewestChangeInPlace(t *testing.T) {
	fs := afero.NewMemMapFs()
	root := "/p"
	now := time.Now().UTC()
	write := func(id string, es ...git.Entry) {
		var b strings.Builder
		for _, e := range es {
			line, _ := json.Marshal(e)
			b.Write(append(line, '\n'))
		}
		if err := afero.WriteFile(fs, memory.LogPath(root, id, git.LogName), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	change := func(ref string, at time.Time) git.Entry {
		return git.Entry{Kind: git.KindTurn, Turn: 1, Request: 1, Time: at, Checkpoint: git.Checkpoint{Ref: ref, Commit: ref, Files: []git.FileChange{{Path: "f"}}}}
	}
	write("s1", change("a", now.Add(-time.Minute)))
	write("s2", change("b", now.Add(-2*time.Minute)))
	write("s3") // a session that changed nothing
	tg, _, _, err := pickTarget(fs, root, "", Selection{}, ErrNothingToUndo)
	if err != nil || tg.ID != "s1" || tg.Named {
		t.Fatalf("picked %+v, %v; want s1, whose change is newest", tg, err)
	}
	write("s1", change("a", now.Add(-time.Minute)), git.Entry{Kind: git.KindUndo, Undone: "a", Time: now, Checkpoint: git.Checkpoint{Ref: "u", Commit: "u"}})
	if tg, _, _, err = pickTarget(fs, root, "", Selection{}, ErrNothingToUndo); err != nil || tg.ID != "s2" {
		t.Fatalf("picked %+v, %v; want s2, s1's change being undone", tg, err)
	}
	write("s2", change("b", now.Add(-2*time.Minute)), git.Entry{Kind: git.KindUndo, Undone: "b", Time: now, Checkpoint: git.Checkpoint{Ref: "u", Commit: "u"}})
	if _, _, _, err = pickTarget(fs, root, "", Selection{}, ErrNothingToShow); !errors.Is(err, ErrNothingToShow) {
		t.Fatalf("with every change undone: %v", err)
	}
	// Named, a session's last change is its undo.
	if tg, log, sel, err := pickTarget(fs, root, "s2", Selection{}, ErrNothingToUndo); err != nil || !tg.Named || pickEntries(log, sel)[0].Kind != git.KindUndo {
		t.Fatalf("named s2: %+v, %v", tg, err)
	}
}

// countingFs counts the files opened through it, by name.
type countingFs struct {
	afero.Fs
	opened map[string]int
}

func (c countingFs) Open(name string) (afero.File, error) {
	c.opened[name]++
	return c.Fs.Open(name)
}

func (c countingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	c.opened[name]++
	return c.Fs.OpenFile(name, flag, perm)
}

// TestPickTargetReadsOnlyTheLogsItMayTakeFrom: with a long history, the
// undo reads the logs written since the newest change in place (and a
// few seconds before it), not every session's: a turn of ten thousand
// files is a megabyte of log, and the history of a project hundreds of
// sessions. A session resumed later than a newer one is still found.
func TestPickTargetReadsOnlyTheLogsItMayTakeFrom(t *testing.T) {
	fs := countingFs{afero.NewMemMapFs(), map[string]int{}}
	root := "/p"
	start := time.Now().UTC().Add(-time.Hour)
	write := func(id string, at time.Time, es ...git.Entry) {
		var b strings.Builder
		for _, e := range es {
			line, _ := json.Marshal(e)
			b.Write(append(line, '\n'))
		}
		path := memory.LogPath(root, id, git.LogName)
		if err := afero.WriteFile(fs, path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := fs.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	change := func(ref string, at time.Time) git.Entry {
		return git.Entry{Kind: git.KindTurn, Turn: 1, Request: 1, Time: at, Checkpoint: git.Checkpoint{Ref: ref, Commit: ref, Files: []git.FileChange{{Path: "f"}}}}
	}
	for i := range 50 {
		at := start.Add(time.Duration(i) * time.Minute)
		write(fmt.Sprintf("s%02d", i), at, change(fmt.Sprintf("c%02d", i), at))
	}
	// s10, resumed last, holds the newest change.
	at := start.Add(55 * time.Minute)
	write("s10", at, change("c10", start.Add(10*time.Minute)), change("late", at))
	clear(fs.opened)
	tg, log, _, err := pickTarget(fs, root, "", Selection{}, ErrNothingToUndo)
	if err != nil || tg.ID != "s10" || log[len(log)-1].Ref != "late" {
		t.Fatalf("picked %+v, %v; want s10, resumed and changed last", tg, err)
	}
	read := 0
	for name := range fs.opened {
		if strings.HasSuffix(name, git.LogName+".jsonl") {
			read++
		}
	}
	if read > 2 {
		t.Fatalf("read %d sessions' logs to find the newest change, want at most 2: %v", read, fs.opened)
	}
}
