package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/afero"
)

// RALPH_PROGRESS.md gets an entry per task, and every checkpoint takes it
// in whole: git hashes, compresses and diffs all of it after each task.
// Left to grow, a 10,000-task run's file reached 2.3 MB and its last
// tasks cost two and a half times its first. So once the file passes
// ProgressRotateAt, its older entries move, whole and in order, to a
// numbered file in .ralph/progress/ and RALPH_PROGRESS.md keeps its
// preamble and at least its newest progressTail bytes of entries: all
// that the check for an entry already written, recovery and the prompt
// read (progressmark.go, RecentProgress).

// ProgressRotateAt is the size past which RALPH_PROGRESS.md's older
// entries are moved to ProgressArchiveDir.
const ProgressRotateAt = 2 * progressTail

// ProgressArchiveDir is where the older entries of RALPH_PROGRESS.md go,
// relative to the project: 0001.md, 0002.md, ... oldest first. It is kept
// out of .ralph/.gitignore's ignore, like config.toml, so a project that
// commits its progress log commits all of it.
var ProgressArchiveDir = filepath.Join(StateDir, "progress")

const progressArchiveHeader = "# Progress (archived)\n\n" +
	"Older entries of RALPH_PROGRESS.md, oldest first, moved here by ralph when that file passed its " +
	"size; the next number continues them and RALPH_PROGRESS.md holds the newest.\n"

// progressMu orders the appends and rotations of one process: a rotation
// rewrites the file whole, and an entry appended between its read and its
// rename would be lost. Other processes are kept out by the project's
// lock.
var progressMu sync.Mutex

// rotateProgress moves the older entries of root's RALPH_PROGRESS.md to
// the next archive once the file is past ProgressRotateAt. The archive is
// written and synced before the file is replaced, so a crash between the
// two leaves every entry in RALPH_PROGRESS.md and an archive that repeats
// its oldest ones; the next rotation finds that archive at the start of
// the file's entries, cuts it and archives only what follows it. A file someone changed while it
// was being rotated is left as it is, to be rotated at a later entry.
func rotateProgress(fs afero.Fs, root string) error {
	path := filepath.Join(root, ProgressFile)
	fi, err := lstat(fs, path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= int64(ProgressRotateAt) {
		return nil
	}
	doc, ok, err := loadDoc(nil, fs, path, 0, false)
	if err != nil || !ok {
		return err
	}
	// The size and time are kept as values: a FileInfo may read them
	// live (afero's in-memory files do).
	size, mtime, perm := fi.Size(), fi.ModTime(), fi.Mode().Perm()
	s := doc.Content
	if int64(len(s)) != size {
		return ErrChangedUnderfoot
	}
	start, cut := progressCut(s)
	if cut <= start {
		return nil
	}
	dir := filepath.Join(root, ProgressArchiveDir)
	n, last, err := newestArchive(fs, dir)
	if err != nil {
		return err
	}
	// Entries an earlier rotation archived but did not cut (ralph died
	// between the two, or the cut failed and entries came after) open the
	// file's entries: they are cut now, not archived again.
	from := start
	if body, ok := strings.CutPrefix(last, progressArchiveHeader); ok && body != "" && strings.HasPrefix(s[start:], body) {
		from = start + len(body)
		cut = max(cut, from)
	}
	if moved := s[from:cut]; moved != "" {
		n++
		name := filepath.Join(dir, fmt.Sprintf("%04d.md", n))
		if err := WriteFileAtomic(fs, name, []byte(progressArchiveHeader+moved), 0o644); err != nil {
			return err
		}
	}
	unchanged := func() error {
		now, err := lstat(fs, path)
		if err != nil {
			return err
		}
		if now.Size() != size || !now.ModTime().Equal(mtime) {
			return ErrChangedUnderfoot
		}
		return nil
	}
	return writeAtomicAfter(fs, path, []byte(s[:start]+s[cut:]), perm, true, unchanged)
}

// progressCut is where the entries of a progress file start (after its
// preamble) and where the kept ones start: at the last entry heading that
// leaves at least progressTail bytes after it. cut <= start means nothing
// is to move.
func progressCut(s string) (start, cut int) {
	start = 0
	if !strings.HasPrefix(s, "## ") {
		if start = strings.Index(s, "\n## "); start < 0 {
			return 0, 0
		}
	}
	end := len(s) - progressTail
	if end <= start {
		return start, start
	}
	cut = strings.LastIndex(s[:end], "\n## ")
	if cut <= start {
		return start, start
	}
	return start, cut
}

// newestArchive is the highest number among dir's archives and that
// file's text; 0 and "" when there is none.
func newestArchive(fs afero.Fs, dir string) (int, string, error) {
	names, err := afero.ReadDir(fs, dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read %s: %w", dir, err)
	}
	var nums []int
	for _, fi := range names {
		base, ok := strings.CutSuffix(fi.Name(), ".md")
		if n, err := strconv.Atoi(base); ok && err == nil && n > 0 && fi.Mode().IsRegular() {
			nums = append(nums, n)
		}
	}
	if len(nums) == 0 {
		return 0, "", nil
	}
	sort.Ints(nums)
	n := nums[len(nums)-1]
	doc, _, err := loadDoc(nil, fs, filepath.Join(dir, fmt.Sprintf("%04d.md", n)), 0, false)
	if err != nil {
		return 0, "", err
	}
	return n, doc.Content, nil
}
