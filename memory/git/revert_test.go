package git

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestRevertCommitTakesATaskBackAndKeepsWhatCameAfter: the revert of a
// task's commit under the person's own commit takes the task's file out,
// keeps the person's commit and their uncommitted work, names the task it
// reopens, and makes TaskLanded and TaskCommits see the task undone. A
// later commit that changed the task's lines, or an uncommitted change to
// the task's file, is refused with nothing touched.
func TestRevertCommitTakesATaskBackAndKeepsWhatCameAfter(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	r := open(t, dir)
	sh(t, dir, "echo task > task.txt && printf 'a\\n' > shared.txt && git add task.txt shared.txt")
	c := strings.TrimSpace(sh(t, dir, "git commit -q -m 'write task.txt' -m 'Ralph-Session: s1\nRalph-Task: t1\nRalph-Attempt: 1' && git rev-parse HEAD"))
	mine := strings.TrimSpace(sh(t, dir, "echo mine > mine.txt && git add mine.txt && git commit -q -m mine && git rev-parse HEAD"))
	sh(t, dir, "echo wip > wip.txt && echo staged > staged.txt && git add staged.txt")
	if got, err := r.TaskCommits(ctx, "s1", "t1"); err != nil || len(got) != 1 || got[0] != c {
		t.Fatalf("TaskCommits = %v, %v; want [%s]", got, err, c)
	}
	res, err := r.RevertCommit(ctx, c, RevertMessage(c, r.Subject(ctx, c), "t1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "git log --format=%s"); !strings.HasPrefix(got, "Revert \"write task.txt\"\nmine\nwrite task.txt\n") {
		t.Errorf("log:\n%s", got)
	}
	if got := sh(t, dir, "git ls-files task.txt shared.txt mine.txt; git status --porcelain"); got != "mine.txt\nA  staged.txt\n?? wip.txt\n" {
		t.Errorf("after the revert:\n%s", got)
	}
	if got := sh(t, dir, "git log -1 --format=%B"); !strings.Contains(got, "This reverts commit "+c+".") || !strings.Contains(got, "Ralph-Reopens: t1") {
		t.Errorf("message:\n%s", got)
	}
	if l := landed(t, r, "t1", 1); l.Done() || l.Reverted != res.Commit {
		t.Errorf("TaskLanded after the revert: %+v", l)
	}
	if got, _ := r.TaskCommits(ctx, "s1", "t1"); len(got) != 0 {
		t.Errorf("TaskCommits after the revert: %v", got)
	}
	if r.Rev(ctx, "HEAD^") != mine {
		t.Error("the revert is not on the person's commit")
	}
	// A later commit changed the task's lines: refused.
	sh(t, dir, "printf 'x\\n' > x.txt && git add x.txt")
	c2 := strings.TrimSpace(sh(t, dir, "git commit -q -m 'write x' -m 'Ralph-Session: s1\nRalph-Task: t2\nRalph-Attempt: 1' && git rev-parse HEAD"))
	sh(t, dir, "printf 'y\\n' > x.txt && git commit -q -am 'change x'")
	head := r.HeadNow(ctx)
	_, err = r.RevertCommit(ctx, c2, RevertMessage(c2, "write x", "t2"))
	var re *RevertError
	if !errors.As(err, &re) || re.Dirty || !errors.Is(err, ErrRevertConflict) || strings.Join(re.Files, ",") != "x.txt" || r.HeadNow(ctx) != head {
		t.Errorf("a conflicting revert: %v", err)
	}
	// An uncommitted change to the file the revert writes: refused.
	sh(t, dir, "printf 'z\\n' > z.txt && git add z.txt")
	c3 := strings.TrimSpace(sh(t, dir, "git commit -q -m 'write z' && git rev-parse HEAD"))
	sh(t, dir, "echo more >> z.txt")
	if _, err := r.RevertCommit(ctx, c3, "undo z"); !errors.As(err, &re) || !re.Dirty || r.HeadNow(ctx) != c3 {
		t.Errorf("a revert over uncommitted work: %v", err)
	}
	// The tip itself is taken back without a merge.
	sh(t, dir, "git checkout -q z.txt")
	if _, err := r.RevertCommit(ctx, c3, "undo z"); err != nil || sh(t, dir, "ls z.txt 2>&1 || true") == "z.txt\n" {
		t.Errorf("the tip's revert: %v", err)
	}
}

// TestUndoneFilesAndTurns: a step an undo took back counts as undone, and
// its files as unchanged unless a step still in place changed them too;
// an undo of that undo puts the step back.
func TestUndoneFilesAndTurns(t *testing.T) {
	t.Parallel()
	files := func(ps ...string) []FileChange {
		var out []FileChange
		for _, p := range ps {
			out = append(out, FileChange{Path: p})
		}
		return out
	}
	log := []Entry{
		{Kind: KindTurn, Turn: 1, Checkpoint: Checkpoint{Ref: "r1", Files: files("a.md", "b.md")}},
		{Kind: KindTurn, Turn: 2, Checkpoint: Checkpoint{Ref: "r2", Files: files("b.md")}},
		{Kind: KindUndo, Undone: "r1", Checkpoint: Checkpoint{Ref: "u1"}},
	}
	if got := UndoneFiles(log); len(got) != 1 || !got["a.md"] {
		t.Errorf("UndoneFiles = %v, want a.md alone", got)
	}
	if got := UndoneTurns(log); len(got) != 1 || !got[1] {
		t.Errorf("UndoneTurns = %v, want turn 1", got)
	}
	log = append(log, Entry{Kind: KindUndo, Undone: "u1", Checkpoint: Checkpoint{Ref: "u2"}})
	if got := UndoneTurns(log); len(got) != 0 {
		t.Errorf("after the undo of the undo: %v", got)
	}
}

// TestReadUndoneFileReadsWhatTheLogSays: the streamed read of a log file
// (every one-shot's summary and every replay) finds what UndoneFiles and
// UndoneTurns find in the same log read whole, and a log without an undo
// has nothing undone.
func TestReadUndoneFileReadsWhatTheLogSays(t *testing.T) {
	t.Parallel()
	entry := func(kind string, turn int, ref, undone string, paths ...string) Entry {
		e := Entry{Kind: kind, Turn: turn, Undone: undone, Checkpoint: Checkpoint{Ref: ref, Commit: "c" + ref}}
		for _, p := range paths {
			e.Files = append(e.Files, FileChange{Path: p})
		}
		return e
	}
	write := func(log []Entry) string {
		var b []byte
		for _, e := range log {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, line...), '\n')
		}
		path := filepath.Join(t.TempDir(), "checkpoints.jsonl")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	log := []Entry{
		entry(KindBaseline, 0, "r0", ""),
		entry(KindTurn, 1, "r1", "", "a.md", "b.md"),
		entry(KindTurn, 2, "r2", "", "b.md"),
		entry(KindUndo, 0, "u1", "r1"),
		entry(KindTurn, 3, "r3", "", "c.md"),
		entry(KindUndo, 0, "u2", "r3"),
		entry(KindUndo, 0, "u3", "u2"),
	}
	fs := afero.NewOsFs()
	got := ReadUndoneFile(fs, write(log))
	if !maps.Equal(got.Files, UndoneFiles(log)) || !maps.Equal(got.Turns, UndoneTurns(log)) {
		t.Errorf("streamed %v %v, whole %v %v", got.Files, got.Turns, UndoneFiles(log), UndoneTurns(log))
	}
	if len(got.Files) != 1 || !got.Files["a.md"] || len(got.Turns) != 1 || !got.Turns[1] {
		t.Errorf("got files %v turns %v, want a.md and turn 1", got.Files, got.Turns)
	}
	if got := ReadUndoneFile(fs, write(log[:3])); len(got.Files)+len(got.Turns) != 0 {
		t.Errorf("a log without an undo: %+v", got)
	}
	if got := ReadUndoneFile(fs, filepath.Join(t.TempDir(), "missing")); len(got.Files)+len(got.Turns) != 0 {
		t.Errorf("a missing log: %+v", got)
	}
}
