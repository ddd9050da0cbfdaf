package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A Tracker is where a plan's tasks live: ralph's own task file, any
// markdown task file in its grammar, a ralphex plan or a ralph-tui
// prd.json, or Beads through its bd command (beadstracker.go). The task
// loop reads and settles tasks through it alone: Load gives every task in
// ralph's terms, so that one rule picks what is ready (TaskFile.Ready),
// and Update claims, settles and notes a task through the same calls on
// the TaskFile (SetState, SetMeta), which the tracker writes back in its
// own format.
type Tracker interface {
	// Name is the plan as a person names it: its path relative to the
	// project root.
	Name() string
	// Load reads the tasks.
	Load() (*TaskFile, error)
	// Update reads the tasks afresh, applies fn and writes back what fn
	// changed; nothing is written when fn fails.
	Update(fn func(f *TaskFile) error) (*TaskFile, error)
	// Verify is the plan's own verify command, "" when it names none (a
	// ralphex plan's validation commands, joined with &&).
	Verify() string
}

// OpenTracker opens the plan at path (relative to root, or absolute):
// a .json file is a ralph-tui prd.json, worked in place; a markdown file
// shaped as ralphex writes plans ("### Task N: title" sections) is read
// as one; any other file is a task list in ralph's grammar. A missing
// file is an error, except RALPH_TASKS.md, which may be empty. A Beads
// plan ("beads:EPIC", BeadsPlanName) is read through bd.
func OpenTracker(fs afero.Fs, root, path string) (Tracker, error) {
	if path == "" {
		path = memory.TasksFile
	}
	if epic, ok := BeadsEpic(path); ok {
		return openBeads(fs, root, path, epic)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, path)
	}
	name := path
	if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		name = filepath.ToSlash(rel)
	}
	isJSON := strings.EqualFold(filepath.Ext(abs), ".json")
	var data []byte
	ralphex, err := false, error(nil)
	if isJSON {
		data, err = rootfs.ReadSmall(fs, abs, memory.MaxStateFile)
	} else {
		// A markdown plan is only looked at here for its shape, read as
		// a stream: the task list read whole at every open was 16 MB
		// of garbage on the largest list ralph reads, twice a run.
		ralphex, err = looksRalphex(fs, abs)
	}
	var tooLarge *rootfs.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, err // a sentence of its own, naming the file
	case errors.Is(err, os.ErrNotExist) && name == memory.TasksFile:
		return &markdownTracker{fs: fs, path: abs, name: name}, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, planErrorf("there is no plan %s", name)
	case err != nil:
		return nil, planErrorf("cannot read the plan %s: %v", name, err)
	}
	switch {
	case isJSON:
		if _, err := parsePRD(data); err != nil {
			return nil, planErrorf("%s: %v", name, err)
		}
		return &viewTracker{fs: fs, root: root, name: name, src: &prdSource{fs: fs, path: abs}}, nil
	case ralphex:
		data, err := rootfs.ReadSmall(fs, abs, memory.MaxStateFile)
		if errors.As(err, &tooLarge) {
			return nil, err
		} else if err != nil {
			return nil, planErrorf("cannot read the plan %s: %v", name, err)
		}
		src := &ralphexSource{fs: fs, path: abs}
		return &viewTracker{fs: fs, root: root, name: name, src: src, verify: src.verify(data)}, nil
	}
	return &markdownTracker{fs: fs, path: abs, name: name}, nil
}

// looksRalphex reports whether the markdown file at abs is a ralphex
// plan (isRalphexPlan), reading it as a stream; a file past
// MaxStateFile is a *rootfs.TooLargeError, as reading it whole was.
func looksRalphex(fs afero.Fs, abs string) (bool, error) {
	f, fi, err := rootfs.OpenSmall(fs, abs)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi.Size() > memory.MaxStateFile {
		return false, &rootfs.TooLargeError{Name: abs, Size: fi.Size(), Limit: memory.MaxStateFile}
	}
	return readsAsRalphex(io.LimitReader(f, memory.MaxStateFile), fi.Size())
}

// ErrPlan is a plan that cannot be worked: missing, unreadable, or with
// tasks that can never start. A PlanError says which, in one sentence.
var ErrPlan = errors.New("bad plan")

// PlanError is a plan that cannot be worked, said in one sentence.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string        { return e.Msg }
func (e *PlanError) Is(target error) bool { return target == ErrPlan }

func planErrorf(format string, args ...any) error {
	return &PlanError{Msg: fmt.Sprintf(format, args...)}
}

// CheckRunnable is what ralph run asks of a plan before it records a
// session: that it has tasks (ErrNoTasks for RALPH_TASKS.md), and that
// none can never start (a depends= naming no task, a cycle).
func CheckRunnable(tr Tracker) error {
	f, err := tr.Load()
	if err != nil {
		return err
	}
	if f.Counts().Total == 0 {
		if tr.Name() == memory.TasksFile {
			if m, ok := tr.(*markdownTracker); ok {
				if _, err := m.fs.Stat(m.path); errors.Is(err, os.ErrNotExist) {
					return ErrNoTasksFile
				}
			}
			return ErrEmptyTasks
		}
		return planErrorf("%s has no tasks", tr.Name())
	}
	if problems := f.GraphProblems(); len(problems) > 0 {
		return planErrorf("%s cannot be worked through: %s", tr.Name(), strings.Join(problems, " "))
	}
	return nil
}

// markdownTracker is a task file in ralph's grammar, edited in place.
type markdownTracker struct {
	fs         afero.Fs
	path, name string
}

func (m *markdownTracker) Name() string   { return m.name }
func (m *markdownTracker) Verify() string { return "" }

func (m *markdownTracker) Load() (*TaskFile, error) {
	_, f, _, err := readParsed(m.fs, m.path)
	return f, err
}

func (m *markdownTracker) Update(fn func(f *TaskFile) error) (*TaskFile, error) {
	return updateTaskFile(m.fs, m.path, fn)
}

// sourceTask is one task as a tracker other than a task file holds it.
type sourceTask struct {
	ID, Title string
	Notes     string
	Priority  *int
	Depends   []string
	Done      bool
	// Claimed is a task the source itself holds in progress (a claimed
	// bead); Mine when this ralph claimed it.
	Claimed, Mine bool
}

// taskSource is a tracker's own storage: what it holds, and how a task
// is marked done there: a prd.json, a ralphex plan, Beads (which also
// holds claims: claimSource).
type taskSource interface {
	read() ([]sourceTask, error)
	// markDone marks tasks done (or not done again) in the source.
	markDone(done map[string]bool) error
}

// claimSource is a source that holds claims itself (Beads): a task ralph
// starts is claimed there, atomically (ErrTaskTaken when another worker
// won it), and a task ralph puts back other than done is released.
type claimSource interface {
	claim(id string) error
	release(id, why string) error
	noteDone(id, note string)
}

// viewTracker works a plan kept in another format through a view of it in
// ralph's grammar. What the source cannot hold (a task in progress or
// failed, its attempts) is kept beside it in .ralph/plans/<name>.json.
type viewTracker struct {
	fs     afero.Fs
	root   string
	name   string
	src    taskSource
	verify string

	// recent is the source's last read, which Load answers from for
	// recentFor when the source is a claimSource: reading Beads is two bd
	// commands of most of a second each, and a loop asks at every
	// boundary (its counts, its stop conditions, the next task), about
	// ten times per task. Update drops what is remembered, as every
	// change ralph makes does.
	recentMu sync.Mutex
	recent   []sourceTask
	recentAt time.Time
}

// recentFor is how long a claim source's read answers Load: short enough
// that a task a person adds in bd shows at the next boundary but one.
const recentFor = 5 * time.Second

func (v *viewTracker) Name() string   { return v.name }
func (v *viewTracker) Verify() string { return v.verify }

// viewState is what ralph keeps of a task beside the source.
type viewState struct {
	State    TaskState `json:"state,omitempty"`
	Attempts int       `json:"attempts,omitempty"`
}

func (v *viewTracker) sidecar() string {
	return filepath.Join(v.root, memory.StateDir, "plans", strings.NewReplacer("/", "__", "\\", "__", ":", "__").Replace(v.name)+".json")
}

func (v *viewTracker) readSidecar() map[string]viewState {
	out := map[string]viewState{}
	if data, err := rootfs.ReadSmall(v.fs, v.sidecar(), memory.MaxSessionFile); err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}

// readRecent is the source's tasks, from the last read while it is
// recent (see recent).
func (v *viewTracker) readRecent() ([]sourceTask, error) {
	if _, ok := v.src.(claimSource); !ok {
		return v.src.read()
	}
	v.recentMu.Lock()
	defer v.recentMu.Unlock()
	if v.recent != nil && time.Since(v.recentAt) < recentFor {
		return slices.Clone(v.recent), nil
	}
	tasks, err := v.src.read()
	if err != nil {
		return nil, err
	}
	v.recent, v.recentAt = slices.Clone(tasks), time.Now()
	return tasks, nil
}

// forget drops the remembered read: ralph changed the source.
func (v *viewTracker) forget() {
	v.recentMu.Lock()
	v.recent = nil
	v.recentMu.Unlock()
}

// viewOf renders the tasks read gives as a task file (a line per task
// with its id, priority, dependencies and attempts, and its notes under
// it), with the source's tasks by id.
func (v *viewTracker) viewOf(read func() ([]sourceTask, error)) (*TaskFile, map[string]sourceTask, error) {
	tasks, err := read()
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]sourceTask, len(tasks))
	side := v.readSidecar()
	var b strings.Builder
	for _, t := range tasks {
		byID[t.ID] = t
		s := side[t.ID]
		box := " "
		switch {
		case t.Done:
			box = "x"
		case t.Claimed, s.State == TaskInProgress:
			box = "~"
		case s.State == TaskFailed:
			box = "!"
		case s.State == TaskSkipped:
			box = "-"
		}
		meta := map[string]string{"id": t.ID}
		if t.Priority != nil {
			meta["priority"] = strconv.Itoa(*t.Priority)
		}
		if len(t.Depends) > 0 {
			meta["depends"] = strings.Join(t.Depends, ",")
		}
		if s.Attempts > 0 {
			meta["attempts"] = strconv.Itoa(s.Attempts)
		}
		title := strings.Join(strings.Fields(t.Title), " ")
		fmt.Fprintf(&b, "- [%s] %s %s\n", box, title, formatMeta(metaFromMap(meta)))
		for _, l := range strings.Split(strings.TrimSpace(t.Notes), "\n") {
			if strings.TrimSpace(l) != "" {
				b.WriteString("  " + strings.TrimRight(l, " \t") + "\n")
			}
		}
	}
	return ParseTasks([]byte(b.String())), byID, nil
}

func (v *viewTracker) Load() (*TaskFile, error) {
	f, _, err := v.viewOf(v.readRecent)
	return f, err
}

// NoteDone keeps the reason a source that holds one closes a task with.
func (v *viewTracker) NoteDone(id, note string) {
	if c, ok := v.src.(claimSource); ok {
		v.forget()
		c.noteDone(id, note)
	}
}

func (v *viewTracker) Update(fn func(f *TaskFile) error) (*TaskFile, error) {
	tasksMu.Lock()
	defer tasksMu.Unlock()
	// Whatever fn changes, or fails half-way through, the source may have
	// changed: what Load remembers is gone. The update itself may start
	// from a recent read: a claim is atomic in the source, so a task
	// another worker took since is refused there (ErrTaskTaken) and passed
	// over, and each bd read costs most of a second of CPU.
	// A successful update remembers the read with its own changes made
	// (rememberOwn), so the loop's next boundaries ask bd nothing.
	kept := false
	defer func() {
		if !kept {
			v.forget()
		}
	}()
	f, src, err := v.viewOf(v.readRecent)
	if err != nil {
		return nil, err
	}
	before := map[string]Task{}
	for _, t := range f.Tasks() {
		before[t.ID] = t
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	claims, _ := v.src.(claimSource)
	if claims != nil {
		if err := v.claim(claims, f, before, src); err != nil {
			return nil, err
		}
	}
	side := v.readSidecar()
	sideChanged := false
	done := map[string]bool{}
	for _, t := range f.Tasks() {
		b, ok := before[t.ID]
		if !ok {
			continue // the view holds the source's tasks only
		}
		if (t.State == TaskDone) != (b.State == TaskDone) {
			done[t.ID] = t.State == TaskDone
		}
		if claims != nil && b.State == TaskInProgress && t.State != TaskInProgress && t.State != TaskDone && src[t.ID].Mine {
			if err := claims.release(t.ID, "ralph put the task back ("+string(t.State)+")"); err != nil {
				return nil, err
			}
		}
		// The attempts= written, not the number a state implies
		// (Task.Attempts): the view is laid out again from the side file,
		// and a first attempt written there would no longer be implied.
		written, _ := strconv.Atoi(t.Meta[attemptsMeta])
		s := viewState{Attempts: written}
		if t.State != TaskDone && t.State != TaskOpen && !(claims != nil && t.State == TaskInProgress) {
			// A source that holds claims holds what is in progress.
			s.State = t.State
		}
		if side[t.ID] != s {
			sideChanged = true
			if s == (viewState{}) {
				delete(side, t.ID)
			} else {
				side[t.ID] = s
			}
		}
	}
	if len(done) > 0 {
		if err := v.src.markDone(done); err != nil {
			return nil, err
		}
	}
	if sideChanged {
		data, err := json.MarshalIndent(side, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := v.fs.MkdirAll(filepath.Dir(v.sidecar()), 0o755); err != nil {
			return nil, err
		}
		if err := memory.WriteFileAtomic(v.fs, v.sidecar(), append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	if claims != nil {
		v.rememberOwn(src, before, f)
		kept = true
	}
	return f, nil
}

// rememberOwn keeps, as the recent read, the source's tasks as the update
// just left them: a task ralph started is claimed by it, one it finished
// is done, one it put back is free. What other workers did meanwhile
// shows at the next read, at most recentFor later; a claim is atomic in
// the source, so acting on the older view costs a refused claim, never a
// task worked twice.
func (v *viewTracker) rememberOwn(src map[string]sourceTask, before map[string]Task, f *TaskFile) {
	v.recentMu.Lock()
	defer v.recentMu.Unlock()
	if v.recent == nil {
		return
	}
	for i, t := range v.recent {
		after, ok := f.Find(t.ID)
		b, had := before[t.ID]
		if !ok || !had || after.State == b.State {
			continue
		}
		switch {
		case after.State == TaskDone:
			t.Done, t.Claimed = true, false
		case after.State == TaskInProgress:
			t.Claimed, t.Mine = true, true
		case b.State == TaskInProgress && src[t.ID].Mine:
			t.Claimed, t.Mine = false, false
		}
		v.recent[i] = t
	}
	v.recentAt = time.Now()
}

// claim claims in the source every task fn set in progress. When one
// cannot be had, those claimed here are given back and the error wraps
// ErrTaskTaken: nothing else of fn's is written. A task another worker
// holds is in progress already, so fn starting it (the loop picked it
// from an older read) shows only as a new attempt: that is refused too.
func (v *viewTracker) claim(c claimSource, f *TaskFile, before map[string]Task, src map[string]sourceTask) error {
	var claimed []string
	for _, t := range f.Tasks() {
		b, ok := before[t.ID]
		if !ok || t.State != TaskInProgress {
			continue
		}
		if b.State == TaskInProgress {
			if s := src[t.ID]; s.Claimed && !s.Mine && t.Meta[attemptsMeta] != b.Meta[attemptsMeta] {
				v.giveBack(c, claimed)
				return fmt.Errorf("%w: %s is claimed by another worker", ErrTaskTaken, t.ID)
			}
			continue
		}
		if err := c.claim(t.ID); err != nil {
			v.giveBack(c, claimed)
			return err
		}
		claimed = append(claimed, t.ID)
	}
	return nil
}

// giveBack releases the claims an update made before it failed.
func (v *viewTracker) giveBack(c claimSource, claimed []string) {
	for _, id := range claimed {
		_ = c.release(id, "ralph could not claim another task of the same change")
	}
}

// replaceAt returns data with the bytes [from, to) replaced by s.
func replaceAt(data []byte, from, to int, s string) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + len(s))
	b.Write(data[:from])
	b.WriteString(s)
	b.Write(data[to:])
	return b.Bytes()
}
