package planfile

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// This file holds what changes a parsed task list, and reading and writing
// it on disk; choosing the next task and checking the list are in
// tasks_next.go.
//
// Every edit splices a task line's text and re-checks that one line, so
// nothing outside the bytes ralph owns moves. Add, the one edit that
// inserts a line, re-parses the whole file.

// setLine replaces task i's line with text, which must still be a task line
// (the edits below only ever produce one; the check keeps a bug from
// silently losing a task).
func (f *TaskFile) setLine(i int, text string) error {
	old := f.tasks[i]
	r, ok := parseTaskLine(text)
	if !ok {
		return fmt.Errorf("internal error: editing line %d would make it stop being a task", old.line+1)
	}
	r.line, r.depth, r.parent = old.line, old.depth, old.parent
	f.own()
	if r.id() != old.id() || !slices.Equal(r.depends(), old.depends()) || priorityOf(&r) != priorityOf(old) {
		f.ids = nil // idIndex builds it again, with each task's id and priority
	}
	if c := f.memo.counts.Load(); c != nil && r.state != old.state {
		n := *c
		count(&n, old.state, -1)
		count(&n, r.state, 1)
		f.memo.counts.Store(&n)
	}
	f.spliced = append(f.spliced, splice{line: old.line, was: len(f.text(old.line))})
	switch {
	case f.linesOwn:
		f.lines[old.line].text = text
	case len(f.over) < overMax:
		if f.over == nil {
			f.over = make(map[int]string)
		}
		f.over[old.line] = text
	default:
		f.ownLines()
		f.lines[old.line].text = text
	}
	f.tasks[i] = &r
	return nil
}

// patch is f's bytes made from before, the bytes f was parsed from: a
// copy of before with the lines f replaced written over their old text,
// when no line was inserted and each kept its length (a checkbox, a
// number of as many digits); ok is false otherwise, and Bytes is the
// way.
func (f *TaskFile) patch(before []byte) (after []byte, ok bool) {
	return f.patchInto(before, nil)
}

// patchInto is patch making the bytes in into's array when it is large
// enough (updateTaskFile's spare).
func (f *TaskFile) patchInto(before, into []byte) (after []byte, ok bool) {
	if f.relaid || len(f.spliced) == 0 {
		return nil, false
	}
	last := 0
	for _, s := range f.spliced {
		if len(f.text(s.line)) != s.was {
			return nil, false
		}
		last = max(last, s.line)
	}
	// Every line keeps its length, so a line starts where it did. The
	// lines before the last one spliced are summed in one pass that
	// looks nothing up: a lookup a line (text, spliced) made the
	// 9,000th task's mark of a plan cost more than its first.
	at := make(map[int]int, len(f.spliced))
	for _, s := range f.spliced {
		at[s.line] = -1
	}
	marks := slices.Sorted(maps.Keys(at))
	overs := slices.Sorted(maps.Keys(f.over))
	off := 0
	for i, l := range f.lines[:last+1] {
		if len(marks) > 0 && marks[0] == i {
			at[i] = off
			marks = marks[1:]
		}
		for len(overs) > 0 && overs[0] < i {
			overs = overs[1:]
		}
		n := len(l.text)
		if len(overs) > 0 && overs[0] == i {
			n = len(f.over[i])
		}
		off += n + len(l.eol)
	}
	if off > len(before) {
		return nil, false
	}
	after = append(into[:0], before...)
	for i, o := range at {
		copy(after[o:], f.text(i))
	}
	return after, true
}

func notFound(id string) error { return fmt.Errorf("%w: %s", ErrTaskNotFound, id) }

// SetState rewrites only the character between the brackets. A task already
// in state s is left alone, so "[X]" stays upper case.
func (f *TaskFile) SetState(id string, s TaskState) error {
	c, ok := stateChar[s]
	if !ok {
		return fmt.Errorf("unknown task state %q", s)
	}
	i := f.find(id)
	if i < 0 {
		return notFound(id)
	}
	return f.setState(i, s, c)
}

func (f *TaskFile) setState(i int, s TaskState, c byte) error {
	r := f.tasks[i]
	if r.state == s {
		return nil
	}
	if id, _ := r.metaGet("id"); s == TaskOpen && id != "" {
		// A task that left open without an attempts= had its first
		// attempt (taskRec.attempts); back to open, that attempt is
		// written down, or the next one would take its number again and
		// its progress mark could be taken for the next one's. A task
		// without an id has no mark to mistake.
		if _, ok := r.metaGet(attemptsMeta); !ok {
			if err := f.setMeta(i, attemptsMeta, "1", false); err != nil {
				return err
			}
			r = f.tasks[i]
		}
	}
	text := f.text(r.line)
	return f.setLine(i, text[:r.stateAt]+string(c)+text[r.stateAt+1:])
}

// attemptsMeta is the ralph comment's key counting a task's attempts.
const attemptsMeta = "attempts"

// StartAttempt marks the task in progress for its attempt-th attempt. A
// first attempt writes only the checkbox, one byte (taskRec.attempts
// reads a task in progress without attempts= as on its first), so that
// on a plan of ten thousand tasks each start is a byte written in place
// rather than the whole file written and renamed again; a later one also
// writes attempts=N.
func (f *TaskFile) StartAttempt(id string, attempt int) error {
	i := f.find(id)
	if i < 0 {
		return notFound(id)
	}
	if f.tasks[i].state == TaskInProgress {
		// Between two attempts a task goes back to open, so one in
		// progress is another's: a worker that claimed it, or a person
		// who marked it, since the loop read the file.
		return fmt.Errorf("%w: %s is in progress already", ErrTaskTaken, id)
	}
	wasOpen := f.tasks[i].state == TaskOpen
	if err := f.setState(i, TaskInProgress, stateChar[TaskInProgress]); err != nil {
		return err
	}
	if wasOpen && f.tasks[i].attempts() == attempt {
		return nil
	}
	return f.setMeta(i, attemptsMeta, strconv.Itoa(attempt), false)
}

// SetMeta sets one key of the task's ralph comment, creating the comment if
// there is none; an empty value deletes the key, and the comment with it
// once it is empty. Other keys, known or not, keep their order. Keys and
// values must be single words that cannot end the comment, or the comment
// would not read back the same; those are refused with an error.
func (f *TaskFile) SetMeta(id, key, value string) error {
	if key == "" || strings.Contains(key, "=") || !validMetaWord(key) {
		return fmt.Errorf("invalid task metadata key %q", key)
	}
	if !validMetaWord(value) {
		return fmt.Errorf("invalid value %q for task metadata key %s: it must be one word", value, key)
	}
	i := f.find(id)
	if i < 0 {
		return notFound(id)
	}
	return f.setMeta(i, key, value, false)
}

// setMeta applies one key change to task i. front puts a new key first,
// which AssignIDs uses so the id reads first.
func (f *TaskFile) setMeta(i int, key, value string, front bool) error {
	r := f.tasks[i]
	var toks []metaTok
	found := false
	for _, t := range r.meta {
		if t.key != key {
			toks = append(toks, t)
		} else if !found && value != "" {
			toks = append(toks, metaTok{key: key, val: value})
			found = true
		}
	}
	if !found && value != "" {
		if front {
			toks = slices.Insert(toks, 0, metaTok{key: key, val: value})
		} else {
			toks = append(toks, metaTok{key: key, val: value})
		}
	}
	if slices.Equal(toks, r.meta) {
		return nil
	}
	text := f.text(r.line)
	switch {
	case r.metaStart >= 0 && len(toks) > 0:
		text = text[:r.metaStart] + formatMeta(toks) + text[r.metaEnd:]
	case r.metaStart >= 0:
		// Take the space that separated the comment from the title with it,
		// so adding and then removing a key gives back the original line.
		s := r.metaStart
		for s > r.after && isSpTab(text[s-1]) {
			s--
		}
		text = text[:s] + text[r.metaEnd:]
	default:
		// The comment goes after the title and before any trailing
		// whitespace, which stays where the person left it.
		text = text[:r.bodyEnd] + " " + formatMeta(toks) + text[r.bodyEnd:]
	}
	return f.setLine(i, text)
}

func formatMeta(toks []metaTok) string {
	var b strings.Builder
	b.WriteString("<!-- ralph:")
	for k, t := range toks {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.String())
	}
	b.WriteString(" -->")
	return b.String()
}

// Add appends an open task after the last task's item (its subtasks, notes
// and code included), or at the end of a file with no tasks, and returns it.
// Its ID is "L<line>" unless meta has an id; call AssignIDs for a stable
// one. Line breaks in title become spaces, since a task is one line; meta
// entries that could not be read back (see SetMeta) are dropped. The new
// line uses the file's line ending, and a file that ended without a final
// newline still does.
func (f *TaskFile) Add(title string, meta map[string]string) Task {
	title = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(title))
	indent, bullet, at := "", "-", len(f.lines)
	if last := len(f.tasks) - 1; last >= 0 {
		root := last
		for f.tasks[root].parent >= 0 {
			root = f.tasks[root].parent
		}
		indent = f.tasks[root].indent
		if b := f.tasks[root].bullet; b == "*" || b == "+" {
			bullet = b // the same marker keeps it in the same list
		}
		at = f.itemEnd(last, f.tasks[root].width)
	} else {
		for i, in := range f.info {
			if in.unclosed {
				at = i // never inside a fence or comment left open at the end
			}
		}
	}
	text := indent + bullet + " [ ]"
	if title != "" {
		text += " " + title
	}
	if toks := metaFromMap(meta); len(toks) > 0 {
		text += " " + formatMeta(toks)
	}
	if i := f.insert(at, text); i >= 0 {
		return f.task(i)
	}
	// Unreachable as far as is known, but a task must never be lost, and
	// the first line of a file is outside any block.
	if i := f.insert(0, text); i >= 0 {
		return f.task(i)
	}
	return Task{}
}

// insert puts a line at index at and returns the index of the task it
// became, or undoes the insertion and returns -1.
func (f *TaskFile) insert(at int, text string) int {
	f.ownLines()
	f.relaid = true
	saved := slices.Clone(f.lines)
	ln := lineRec{text: text, eol: f.lineEnding()}
	if at == len(f.lines) && at > 0 {
		switch prev := &f.lines[at-1]; prev.eol {
		case "":
			prev.eol, ln.eol = ln.eol, ""
		case "\r":
			prev.eol = "\r\n"
		}
	}
	f.lines = slices.Insert(f.lines, at, ln)
	f.reparse()
	for i := range f.tasks {
		if f.tasks[i].line == at {
			f.shiftLineDepends(at, i)
			return i
		}
	}
	f.lines = saved
	f.reparse()
	return -1
}

// shiftLineDepends keeps each depends= that names a task by its line
// ("L7") naming the same task once a line was inserted at index at: a
// reference to a line at or below it, as the file was before, now names
// the line after. The task just inserted (added) is left alone: its
// references are to the file as whoever added it read it.
func (f *TaskFile) shiftLineDepends(at, added int) {
	for i := range f.tasks {
		deps := f.tasks[i].depends()
		changed := false
		for k, d := range deps {
			if n, err := strconv.Atoi(d[min(1, len(d)):]); i != added && err == nil && isLineRef(d) && n-1 >= at {
				deps[k], changed = "L"+strconv.Itoa(n+1), true
			}
		}
		if changed {
			_ = f.setMeta(i, "depends", strings.Join(deps, ","), false)
		}
	}
}

// itemEnd returns the line index just past the list item that holds task
// last: lines indented deeper than its top-level task, lazy continuation
// lines, and closed code blocks inside it. Blank lines count only when more
// of the item follows them.
func (f *TaskFile) itemEnd(last, rootWidth int) int {
	end := f.tasks[last].line + 1
	for i := end; i < len(f.lines); {
		in := f.info[i]
		switch {
		case in.kind == kindInBlock:
		case in.kind == kindBlank:
			j := i
			for j < len(f.lines) && f.info[j].kind == kindBlank {
				j++
			}
			if j == len(f.lines) || f.info[j].width <= rootWidth {
				return end
			}
			i = j
			continue
		case in.kind == kindOpen && (in.width <= rootWidth || in.unclosed),
			in.kind == kindHeading,
			(in.kind == kindList || in.kind == kindTask) && in.width <= rootWidth:
			return end
		}
		i++
		end = i
	}
	return end
}

// lineEnding is the file's usual terminator: CRLF if most lines use it.
func (f *TaskFile) lineEnding() string {
	crlf, lf := 0, 0
	for _, l := range f.lines {
		switch l.eol {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// metaFromMap orders meta for Add: the well-known keys first in a fixed
// order, then the rest alphabetically, so the same call writes the same line.
func metaFromMap(meta map[string]string) []metaTok {
	rank := map[string]int{"id": 0, "priority": 1, "depends": 2, "attempts": 3}
	keys := make([]string, 0, len(meta))
	for k, v := range meta {
		if k != "" && v != "" && !strings.Contains(k, "=") && validMetaWord(k) && validMetaWord(v) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		ra, oka := rank[keys[a]]
		rb, okb := rank[keys[b]]
		switch {
		case oka && okb:
			return ra < rb
		case oka != okb:
			return oka
		}
		return keys[a] < keys[b]
	})
	toks := make([]metaTok, len(keys))
	for i, k := range keys {
		toks[i] = metaTok{key: k, val: meta[k]}
	}
	return toks
}

// tasksMu serialises UpdateTasks within the process, so two goroutines
// cannot read the same old file and each write back only their own change.
var tasksMu sync.Mutex

// readTasks reads a task list whole, up to MaxStateFile: a larger one is
// refused before it is parsed, and so before anything could rewrite it.
func readTasks(fs afero.Fs, path string) ([]byte, os.FileMode, error) {
	data, err := rootfs.ReadSmall(fs, path, memory.MaxStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	perm := os.FileMode(0o644)
	if st, err := fs.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	return data, perm, nil
}

// ErrNoTasks is a task list with no task in it, which `ralph run` refuses
// (exit 2) before it records a session: a run with nothing to do would
// otherwise leave a session that says it runs. The error a run gets
// matches it and says which is the case: the file is missing
// (ErrNoTasksFile), or there but without a task, as `ralph init` leaves
// it (ErrEmptyTasks).
var ErrNoTasks = errors.New(memory.TasksFile + " has no tasks")

// ErrNoTasksFile and ErrEmptyTasks are ErrNoTasks, each in the words of
// its case.
var (
	ErrNoTasksFile error = noTasksError(memory.TasksFile + " has no tasks: there is no such file; `ralph init` creates it, then add lines like \"- [ ] do something\" (or `ralph plan \"a feature\"` writes them)")
	ErrEmptyTasks  error = noTasksError(memory.TasksFile + " has no tasks yet; add lines like \"- [ ] do something\" (or `ralph plan \"a feature\"` writes them)")
)

type noTasksError string

func (e noTasksError) Error() string        { return string(e) }
func (e noTasksError) Is(target error) bool { return target == ErrNoTasks }

// LoadTasks reads root's RALPH_TASKS.md; a missing file is an empty list.
func LoadTasks(fs afero.Fs, root string) (*TaskFile, error) {
	_, f, _, err := readParsed(fs, filepath.Join(root, memory.TasksFile))
	return f, err
}

// UpdateTasks re-reads the file right before changing it, applies fn, and
// writes the result atomically only if the bytes changed. Working on the
// freshest copy, rather than on one loaded when the run started, keeps edits
// a person made in the meantime. A missing file is treated as empty (fn may
// Add) and is created only if fn changes something; its mode is otherwise
// kept. If fn fails, nothing is written and the error is returned.
func UpdateTasks(fs afero.Fs, root string, fn func(f *TaskFile) error) (*TaskFile, error) {
	return updateTaskFile(fs, filepath.Join(root, memory.TasksFile), fn)
}

// spare is the array of a task file's bytes that nobody holds any more
// (those the cache kept before updateTaskFile's latest write), which the
// next edit's patch fills rather than allocating: on a plan of ten
// thousand tasks each edit made a copy of 400 KB, two or three a task,
// which the collector then had to keep up with. Guarded by tasksMu.
var spare []byte

// updateTaskFile is UpdateTasks of the task file at path.
func updateTaskFile(fs afero.Fs, path string, fn func(f *TaskFile) error) (*TaskFile, error) {
	tasksMu.Lock()
	defer tasksMu.Unlock()
	for try := 0; ; try++ {
		before, f, perm, err := readParsed(fs, path)
		if err != nil {
			return nil, err
		}
		if err := fn(f); err != nil {
			return nil, err
		}
		if f.grown > 0 {
			return nil, &grownTooLarge{path: path, size: f.grown}
		}
		if !f.edited {
			return f, nil // nothing was edited: the bytes are before's
		}
		after, ok := f.patchInto(before, spare)
		if !ok {
			after = f.Bytes()
		} else {
			spare = nil // after holds its array until it is given back
		}
		if bytes.Equal(before, after) {
			spare = after
			return f, nil
		}
		if len(after) > memory.MaxStateFile {
			// Written, the list would be one ralph refuses to read
			// again: every later status or run would stop at it.
			return nil, &grownTooLarge{path: path, size: int64(len(after))}
		}
		err = writeTasks(fs, path, before, after, perm, try == 0)
		if errors.Is(err, memory.ErrChangedUnderfoot) {
			spare = after
			continue // someone wrote it meanwhile: their edit is read again
		}
		if err != nil {
			spare = after
			return nil, err
		}
		remember(f, after)
		// The cache held before until now, and updateTaskFile is the
		// only one to use a read's bytes past the read (under tasksMu):
		// nobody holds them any more.
		spare = before
		return f, nil
	}
}

// writeTasks replaces the task file before with after. A change of one
// byte (a checkbox: a task marked done or in progress) is made in place
// when inPlace allows, so a step of a plan of ten thousand tasks does not
// write and sync the whole file again; it is ErrChangedUnderfoot when
// someone else wrote the file since it was read, and the caller reads it
// again. Anything else is written whole and atomically.
func writeTasks(fs afero.Fs, path string, before, after []byte, perm os.FileMode, inPlace bool) error {
	if i, ok := oneByteChanged(before, after); ok && inPlace {
		return memory.ReplaceByte(fs, path, i, after[i], before)
	}
	return memory.WriteFileAtomic(fs, path, after, perm)
}

// oneByteChanged reports whether a and b differ in exactly one byte, and
// where.
func oneByteChanged(a, b []byte) (int, bool) {
	if len(a) != len(b) {
		return 0, false
	}
	// The first difference is looked for a block at a time, with the
	// machine's vector compare: byte by byte, half of a 400 KB plan
	// took longer than the rest of the edit.
	i := 0
	const block = 4 << 10
	for i+block <= len(a) && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) || !bytes.Equal(a[i+1:], b[i+1:]) {
		return 0, false
	}
	return i, true
}
