package planfile

import (
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory"
)

// IDChange is one id that AssignIDs wrote.
type IDChange struct {
	Line  int    // 1-based, as the file was when the id was written
	Title string // the task's title, so a person can find it
	Old   string // the duplicate id the task had, or "" if it had none
	New   string
	// Reopened: the task was in progress under the id it lost, where
	// nobody works it under its new one, so it went back to open.
	Reopened bool
}

// AssignIDs gives every task without an id, and every task but one of
// those sharing an id, the smallest unused "t<N>", in file order, so ids
// stay short and stable however the file is reordered later. A duplicate
// id would make an edit by id land on the first of its tasks only, so the
// others could never be marked done. It returns what it changed, in file
// order; only the id inside the ralph comment changes, and the state of a
// task that was in progress under the id it lost.
//
// Of the tasks sharing an id, the first keeps it, unless working names the
// id: working maps the ids a task loop is working on to the titles of
// those tasks, and the task with that title (in progress first) keeps the
// id, so that a running task's line copied above itself (a natural way to
// add a similar task) is not marked done for the original's work. A task
// that loses an id while in progress is worked by nobody under its new
// one: it goes back to open, and its attempts, never made, are dropped.
//
// Ids that would take the file past what ralph reads of it
// (memory.MaxStateFile) are not given at all: f is left as it was, and
// UpdateTasks refuses the update in one sentence rather than write a
// list that every later read would refuse.
func (f *TaskFile) AssignIDs(working map[string]string) []IDChange {
	return f.assignIDs(working, memory.MaxStateFile)
}

// assignIDs is AssignIDs giving no id when the ids would take the file
// past limit bytes, which it records in f.grown.
func (f *TaskFile) assignIDs(working map[string]string, limit int64) []IDChange {
	// Every task with an id of its own, as after the last call: nothing
	// to do, and no map to build (the loop asks at every edit), unless a
	// dependency still names a task by its line.
	if f.idIndex(); !f.dupIDs && !f.missingIDs && !f.lineDepends() {
		return nil
	}
	used := map[string]bool{}
	keeper := map[string]int{}
	score := func(i int, id string) int {
		title, ok := working[id]
		if !ok {
			return 0
		}
		n := 0
		if f.tasks[i].title == title {
			n += 2
		}
		if f.tasks[i].state == TaskInProgress {
			n++
		}
		return n
	}
	for i := range f.tasks {
		v, _ := f.tasks[i].metaGet("id")
		if v == "" {
			continue
		}
		used[v] = true
		if k, ok := keeper[v]; !ok || score(i, v) > score(k, v) {
			keeper[v] = i
		}
	}
	// The ids are chosen, and the size they take the file to worked
	// out, before a line is rebuilt: a list they would take past what
	// ralph reads is refused as it is (grown), where building it first
	// held a second copy of the largest list ralph reads, line by line.
	var plan []assignment
	size := f.size()
	n := 1
	for i, r := range f.tasks {
		old, _ := r.metaGet("id")
		if old != "" && keeper[old] == i {
			continue
		}
		for used["t"+strconv.Itoa(n)] {
			n++
		}
		id := "t" + strconv.Itoa(n)
		used[id] = true
		reopen := old != "" && r.state == TaskInProgress
		was := len(f.text(r.line))
		size += int64(idLineLen(r, was, id, reopen) - was)
		plan = append(plan, assignment{task: i, old: old, id: id, reopen: reopen})
	}
	deps := f.lineDependsAsIDs(keeper, plan)
	for _, d := range deps {
		was, _ := f.tasks[d.task].metaGet("depends")
		size += int64(len(d.value) - len(was))
	}
	if size > limit {
		f.grown = size
		return nil
	}
	out := make([]IDChange, 0, len(plan))
	for _, a := range plan {
		if f.setMeta(a.task, "id", a.id, true) != nil {
			continue
		}
		r := f.tasks[a.task]
		c := IDChange{Line: r.line + 1, Title: r.title, Old: a.old, New: a.id}
		if a.reopen {
			c.Reopened = f.setState(a.task, TaskOpen, stateChar[TaskOpen]) == nil
			_ = f.setMeta(a.task, attemptsMeta, "", false)
		}
		out = append(out, c)
	}
	for _, d := range deps {
		_ = f.setMeta(d.task, "depends", d.value, false)
	}
	return out
}

// assignment is an id AssignIDs gives a task: the one it had (old), the
// new one, and whether the task goes back to open.
type assignment struct {
	task    int
	old, id string
	reopen  bool
}

// dependsEdit is a task's depends= as AssignIDs writes it: its line
// references made the ids of the tasks they named.
type dependsEdit struct {
	task  int
	value string
}

// lineDepends reports whether a task's depends= names a task by its line
// ("L3"), which the task's id must replace before the list is written.
func (f *TaskFile) lineDepends() bool {
	if !f.anyDepends {
		return false
	}
	for i := range f.tasks {
		for _, d := range f.tasks[i].depends() {
			if isLineRef(d) {
				return true
			}
		}
	}
	return false
}

// lineDependsAsIDs is every depends= that names a task by its line,
// rewritten to name it by the id it has once plan is applied. A line
// number means the file as it was read, before any id or edit of this
// update: a task that gets an id no longer answers to its line (its id
// replaces "L<line>"), and an edit that inserts a line moves every line
// below, so the reference is resolved here, once, and written in the same
// write as the ids. A task with an id of its own named by its line is
// named by that id too. A reference to a line that holds no task, or to
// an id that looks like a line number, stays as it is: GraphProblems and
// the loop's end say it names no task.
func (f *TaskFile) lineDependsAsIDs(keeper map[string]int, plan []assignment) []dependsEdit {
	if !f.anyDepends {
		return nil
	}
	given := make(map[int]string, len(plan))
	for _, a := range plan {
		given[a.task] = a.id
	}
	atLine := map[string]int{}
	for i := range f.tasks {
		atLine["L"+strconv.Itoa(f.tasks[i].line+1)] = i
	}
	var out []dependsEdit
	for i := range f.tasks {
		deps := f.tasks[i].depends()
		changed := false
		for k, d := range deps {
			if !isLineRef(d) {
				continue
			}
			if _, named := keeper[d]; named {
				continue // a task's own id, however it looks
			}
			j, ok := atLine[d]
			if !ok {
				continue
			}
			id := given[j]
			if id == "" {
				id, _ = f.tasks[j].metaGet("id")
			}
			if id != "" && validMetaWord(id) && !strings.Contains(id, ",") {
				deps[k], changed = id, true
			}
		}
		if changed {
			out = append(out, dependsEdit{task: i, value: strings.Join(deps, ",")})
		}
	}
	return out
}

// idLineLen is the length task r's line, n bytes now, has once setMeta
// gave it id first in its ralph comment and, reopened, took its attempts
// out: the line AssignIDs makes, measured without being built.
func idLineLen(r *taskRec, n int, id string, reopen bool) int {
	comment, words, hasID := len("<!-- ralph:")+len(" -->"), 0, false
	for _, t := range r.meta {
		switch {
		case t.key == "id" && hasID, reopen && t.key == attemptsMeta:
			continue // setMeta keeps one word of a key, and drops the attempts
		case t.key == "id":
			hasID = true
			comment += len("id=") + len(id)
		case t.bare:
			comment += len(t.key)
		default:
			comment += len(t.key) + 1 + len(t.val)
		}
		words++
	}
	if !hasID {
		comment += len("id=") + len(id)
		words++
	}
	comment += words - 1 // the spaces between the words
	if r.metaStart >= 0 {
		return n - (r.metaEnd - r.metaStart) + comment
	}
	return n + len(" ") + comment // after the title, before trailing blanks
}

// size is the length of f's bytes, as Bytes would give them.
func (f *TaskFile) size() int64 {
	var n int64
	for i, l := range f.lines {
		n += int64(len(f.text(i)) + len(l.eol))
	}
	return n
}
