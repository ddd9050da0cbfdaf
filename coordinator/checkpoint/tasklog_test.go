package checkpoint

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// TestTaskEntriesFollowTheLog: a task's entries come from what the log
// holds when asked, read as it grows (a line still being written waits
// for the next ask), and a log replaced by a shorter one is read again
// from its start.
func TestTaskEntriesFollowTheLog(t *testing.T) {
	fs := afero.NewMemMapFs()
	p := New("/p", fs, false)
	path := memory.LogPath("/p", "s", git.LogName)
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(kind, task, ref string) string {
		b, _ := json.Marshal(git.Entry{Kind: kind, Task: task, Checkpoint: git.Checkpoint{Ref: ref, Commit: "c" + ref}})
		return string(b) + "\n"
	}
	write := func(s string) {
		t.Helper()
		if err := afero.WriteFile(fs, path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refs := func(es []git.Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.Ref)
		}
		return out
	}
	if got := p.entries("s", "t1"); len(got) != 0 {
		t.Fatalf("no log: %v", got)
	}
	log := line(git.KindBaseline, "", "0") + line(git.KindTask, "t1", "t1-1") + line(git.KindTurn, "", "turn-1")
	write(log)
	if got := refs(p.entries("s", "t1")); len(got) != 1 || got[0] != "t1-1" {
		t.Fatalf("t1: %v", got)
	}
	// Half a line is not read yet; once whole, it is.
	next := line(git.KindTask, "t1", "t1-2")
	log += line(git.KindTask, "t2", "t2-1")
	write(log + next[:10])
	if got := refs(p.entries("s", "t1")); len(got) != 1 {
		t.Fatalf("t1 with half a line: %v", got)
	}
	log += next
	write(log)
	if got := refs(p.entries("s", "t1")); len(got) != 2 || got[1] != "t1-2" {
		t.Fatalf("t1 after its second attempt: %v", got)
	}
	if got := refs(p.entries("s", "t2")); len(got) != 1 || got[0] != "t2-1" {
		t.Fatalf("t2: %v", got)
	}
	// A shorter log is another log.
	write(line(git.KindTask, "t3", "t3-1"))
	if got := p.entries("s", "t1"); len(got) != 0 {
		t.Fatalf("t1 in a replaced log: %v", refs(got))
	}
	if got := refs(p.entries("s", "t3")); len(got) != 1 {
		t.Fatalf("t3: %v", got)
	}
}
