package memory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// appendEntries appends n task entries of about 1 KB each, numbered from
// first, and returns their titles in order.
func appendEntries(t *testing.T, fs afero.Fs, root string, first, n int) []string {
	t.Helper()
	var titles []string
	for i := first; i < first+n; i++ {
		title := fmt.Sprintf("task %d", i)
		err := AppendProgress(fs, root, ProgressEntry{Time: sfNow, Title: title, Body: strings.Repeat("x", 1000),
			TaskID: fmt.Sprintf("t%d", i), Attempt: 1, SessionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, title)
	}
	return titles
}

// allProgress is every archive's entries, oldest first, then
// RALPH_PROGRESS.md's, each archive's header and the file's preamble left
// out.
func allProgress(t *testing.T, fs afero.Fs, root string) (entries string, archives int) {
	t.Helper()
	dir := filepath.Join(root, ProgressArchiveDir)
	for n := 1; ; n++ {
		b, err := afero.ReadFile(fs, filepath.Join(dir, fmt.Sprintf("%04d.md", n)))
		if err != nil {
			break
		}
		body, ok := strings.CutPrefix(string(b), progressArchiveHeader)
		if !ok {
			t.Fatalf("archive %d has no header:\n%.200s", n, b)
		}
		entries += body
		archives = n
	}
	b, err := afero.ReadFile(fs, filepath.Join(root, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, "# Progress\n") {
		t.Fatalf("RALPH_PROGRESS.md lost its preamble:\n%.200s", s)
	}
	return entries + s[strings.Index(s, "\n## "):], archives
}

// wantEntriesOnce checks that entries holds every title once, in order.
func wantEntriesOnce(t *testing.T, entries string, titles []string) {
	t.Helper()
	if got := strings.Count(entries, "\n## "); got != len(titles) {
		t.Fatalf("%d entries in the file and its archives, want %d", got, len(titles))
	}
	rest := entries
	for _, title := range titles {
		i := strings.Index(rest, "— "+title+"\n")
		if i < 0 {
			t.Fatalf("entry %q missing or out of order", title)
		}
		rest = rest[i:]
	}
}

// TestProgressRotatesOlderEntries: past ProgressRotateAt, the older
// entries of RALPH_PROGRESS.md move to numbered archives and the file
// keeps its preamble and at least its newest progressTail bytes, so a
// checkpoint's cost stays bounded over a long run; no entry is lost or
// repeated, and an entry already written is still found and not written
// again.
func TestProgressRotatesOlderEntries(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	titles := appendEntries(t, fs, sfRoot, 1, 600)
	entries, archives := allProgress(t, fs, sfRoot)
	wantEntriesOnce(t, entries, titles)
	if archives < 3 {
		t.Errorf("%d archives after 600 KB of entries, want several", archives)
	}
	fi, err := fs.Stat(filepath.Join(sfRoot, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > ProgressRotateAt || fi.Size() < progressTail {
		t.Errorf("RALPH_PROGRESS.md is %d bytes, want between %d and %d", fi.Size(), progressTail, ProgressRotateAt)
	}
	// The newest entry (task 600's) is found where a repeated write
	// looks, and is not written again.
	appendEntries(t, fs, sfRoot, 600, 1)
	if entries2, _ := allProgress(t, fs, sfRoot); entries2 != entries {
		t.Error("an entry already written was written again after rotations")
	}
}

// TestProgressRotationFinishesAfterACrash: a ralph that died after
// writing an archive and before cutting RALPH_PROGRESS.md leaves the
// archived entries in both, and more entries may come after them before
// the next rotation; that rotation takes the archive for its own, cuts
// it and archives only what follows, so no entry is archived twice.
func TestProgressRotationFinishesAfterACrash(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"just after", "entries later"} {
		t.Run(name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			var titles []string
			text := progressTemplate
			for i := 1; i <= 200; i++ {
				titles = append(titles, fmt.Sprintf("task %d", i))
				text += "\n## 2026-11-21 14:03 UTC — " + titles[i-1] + "\n\n" + strings.Repeat("y", 1000) + "\n"
			}
			start, cut := progressCut(text)
			if name == "entries later" {
				// The archive the dead ralph wrote holds fewer entries
				// than this rotation would move.
				cut = strings.LastIndex(text[:cut/2], "\n## ")
			}
			sfWrite(t, fs, ProgressFile, text)
			archive := filepath.Join(sfRoot, ProgressArchiveDir, "0001.md")
			if err := afero.WriteFile(fs, archive, []byte(progressArchiveHeader+text[start:cut]), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := rotateProgress(fs, sfRoot); err != nil {
				t.Fatal(err)
			}
			_, err := fs.Stat(filepath.Join(sfRoot, ProgressArchiveDir, "0002.md"))
			if wantNew := name == "entries later"; (err == nil) != wantNew {
				t.Errorf("a second archive written: %v, want %v", err == nil, wantNew)
			}
			if b, _ := afero.ReadFile(fs, filepath.Join(sfRoot, ProgressFile)); int64(len(b)) > ProgressRotateAt {
				t.Error("the half-done rotation was not finished")
			}
			entries, _ := allProgress(t, fs, sfRoot)
			wantEntriesOnce(t, entries, titles)
		})
	}
}

// touchOnCreateFs appends to RALPH_PROGRESS.md when a temporary file is
// created beside it: a person's editor writing while ralph rotates.
type touchOnCreateFs struct{ afero.Fs }

func (f touchOnCreateFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&os.O_EXCL != 0 && filepath.Dir(name) == sfRoot {
		p := filepath.Join(sfRoot, ProgressFile)
		b, _ := afero.ReadFile(f.Fs, p)
		_ = afero.WriteFile(f.Fs, p, append(b, "\nA note by hand.\n"...), 0o644)
		time.Sleep(time.Millisecond)
	}
	return f.Fs.OpenFile(name, flag, perm)
}

// TestProgressRotationKeepsAnEditMeanwhile: a file written by someone else
// while a rotation runs is not replaced; it is rotated at a later entry.
func TestProgressRotationKeepsAnEditMeanwhile(t *testing.T) {
	t.Parallel()
	fs := touchOnCreateFs{afero.NewMemMapFs()}
	var text string
	for i := 1; i <= 200; i++ {
		text += fmt.Sprintf("\n## 2026-11-21 14:03 UTC — task %d\n\n%s\n", i, strings.Repeat("z", 1000))
	}
	sfWrite(t, fs.Fs, ProgressFile, progressTemplate+text)
	if err := rotateProgress(fs, sfRoot); err == nil {
		t.Fatal("a rotation over a file changed meanwhile said nothing")
	}
	if got := sfRead(t, fs.Fs, ProgressFile); !strings.HasSuffix(got, "A note by hand.\n") || !strings.HasPrefix(got, progressTemplate+text) {
		t.Errorf("the edit made meanwhile was lost, or entries were:\n%.300s", got)
	}
}

// TestProgressArchiveFollowsNoLink: a command swaps .ralph/progress for a
// link to a directory in the person's home; the rotation writes nothing
// there, and the entries stay in RALPH_PROGRESS.md, appended as ever.
func TestProgressArchiveFollowsNoLink(t *testing.T) {
	t.Parallel()
	root, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(root, ProgressArchiveDir)); err != nil {
		t.Fatal(err)
	}
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	titles := appendEntries(t, door, root, 1, 200)
	if left, _ := os.ReadDir(home); len(left) != 0 {
		t.Fatalf("the rotation wrote through the link into home: %v", left)
	}
	b, err := os.ReadFile(filepath.Join(root, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	wantEntriesOnce(t, string(b), titles)
}
