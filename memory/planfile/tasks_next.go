package planfile

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory"
)

// This file holds what reads a parsed task list without changing it:
// choosing what to work on next, counting, and checking the list for
// mistakes a person should fix.

// idIndex maps each id to its first task; Validate reports duplicates.
// It is built once per parse (and after an edit that changes an id), and
// callers must not change it: the loop asks for it at every step, and on a
// plan of ten thousand tasks building it each time was most of a step.
func (f *TaskFile) idIndex() map[string]int {
	if f.ids != nil {
		return f.ids
	}
	m := make(map[string]int, len(f.tasks))
	idOf, prios := make([]string, len(f.tasks)), make([]int, len(f.tasks))
	dup, missing, deps := false, false, false
	for i := range f.tasks {
		if v, _ := f.tasks[i].metaGet("id"); v == "" {
			missing = true
		}
		if v, _ := f.tasks[i].metaGet("depends"); v != "" {
			deps = true
		}
		id := f.tasks[i].id()
		idOf[i] = id
		prios[i], _ = f.tasks[i].priority()
		if _, seen := m[id]; seen {
			dup = true
			continue
		}
		m[id] = i
	}
	f.ids, f.dupIDs, f.missingIDs, f.anyDepends = m, dup, missing, deps
	f.idOf, f.prios = idOf, prios
	return m
}

// ready reports whether task i is open, has a title to work on, and every
// task it depends on exists and is done or skipped.
func (f *TaskFile) ready(i int, ids map[string]int) bool {
	r := f.tasks[i]
	if r.state != TaskOpen || r.title == "" {
		return false
	}
	for _, d := range r.depends() {
		j, ok := ids[d]
		if !ok || f.tasks[j].state != TaskDone && f.tasks[j].state != TaskSkipped {
			return false
		}
	}
	return true
}

// Ready returns the tasks that can be worked on now, most urgent first:
// the lowest priority number, then file order. A task is ready when it is
// open, has a title to tell the agent, and every task it depends on exists
// and is done or skipped (a failed dependency keeps it waiting, since the
// work it builds on is missing). Subtasks are ordinary tasks. exclude, if
// not nil, leaves out the tasks whose id it reports, such as those a
// caller is already running.
//
// This is the one rule for what comes next: ralph status shows the first
// of it and ralph run starts from it, so the two cannot disagree.
func (f *TaskFile) Ready(exclude func(id string) bool) []Task {
	out, _ := f.ReadyFirst(exclude, len(f.tasks))
	return out
}

// ReadyFirst is the first n tasks of Ready, and how many Ready has in all.
// A loop asks at every step and starts one or a few; building every ready
// task of a long plan (and sorting them all) was most of a step's cost, so
// only the first n are ranked out and built. n of 0 only counts.
func (f *TaskFile) ReadyFirst(exclude func(id string) bool, n int) ([]Task, int) {
	ids := f.idIndex()
	if !f.anyDepends && n > 0 && n <= firstFew {
		return f.readyFew(exclude, n)
	}
	ready := make([]int, 0, len(f.tasks))
	for i := range f.tasks {
		if f.ready(i, ids) && (exclude == nil || !exclude(f.tasks[i].id())) {
			ready = append(ready, i)
		}
	}
	if n <= 0 || len(ready) == 0 {
		return nil, len(ready)
	}
	var order func(a, b int) int
	if f.anyDepends {
		order = f.blocking(ids).compare
	} else {
		// With no dependency in the file every chain and every count of
		// waiting tasks is 0, so the order is the priority, then file
		// order, and the graph need not be built.
		prio := make([]int, len(f.tasks))
		for _, i := range ready {
			prio[i], _ = f.tasks[i].priority()
		}
		order = func(a, b int) int { return cmp.Or(cmp.Compare(prio[a], prio[b]), cmp.Compare(a, b)) }
	}
	top := firstStable(ready, n, order)
	out := make([]Task, len(top))
	for k, i := range top {
		out[k] = f.task(i)
	}
	return out, len(ready)
}

// firstFew is the most tasks ReadyFirst picks in one pass, without
// listing every ready task first.
const firstFew = 16

// readyFew is ReadyFirst of a file with no dependency, for a few tasks:
// the order is the priority, then file order, so one pass keeps the n
// first in order as it goes, and counts the rest. The loop asks at every
// step for one or a few, and on ten thousand tasks the two lists as long
// as the file, built and dropped at each ask, cost more than the pass.
func (f *TaskFile) readyFew(exclude func(id string) bool, n int) ([]Task, int) {
	type pick struct{ prio, i int }
	var buf [firstFew + 1]pick
	best, count := buf[:0], 0
	// Each task's id and priority come from idIndex (ReadyFirst built
	// it): read from the line's metadata, they were most of a pass over
	// ten thousand tasks, made at every step.
	if len(f.idOf) != len(f.tasks) || len(f.prios) != len(f.tasks) {
		f.ids = nil
		f.idIndex()
	}
	for i := range f.tasks {
		r := f.tasks[i]
		// No task names a dependency, so ready is open with a title.
		if r.state != TaskOpen || r.title == "" || exclude != nil && exclude(f.idOf[i]) {
			continue
		}
		count++
		p := f.prios[i]
		if len(best) == n && p >= best[n-1].prio {
			continue // file order: a later task of equal priority comes after
		}
		pos := len(best)
		for pos > 0 && p < best[pos-1].prio {
			pos--
		}
		best = slices.Insert(best, pos, pick{p, i})
		if len(best) > n {
			best = best[:n]
		}
	}
	if count == 0 {
		return nil, 0
	}
	out := make([]Task, len(best))
	for k, b := range best {
		out[k] = f.task(b.i)
	}
	return out, count
}

// firstStable is the first n of s as slices.SortStableFunc would order
// them, found in one pass that keeps only n: an element goes after every
// kept one that is not greater, which is where a stable sort puts it.
func firstStable(s []int, n int, cmp func(a, b int) int) []int {
	if n >= len(s) {
		slices.SortStableFunc(s, cmp)
		return s
	}
	best := make([]int, 0, n+1)
	for _, x := range s {
		pos := len(best)
		for pos > 0 && cmp(x, best[pos-1]) < 0 {
			pos--
		}
		if pos == n {
			continue
		}
		best = slices.Insert(best, pos, x)
		if len(best) > n {
			best = best[:n]
		}
	}
	return best
}

// urgency orders the ready tasks. Among tasks of equal priority the one on
// the longest chain of open tasks waiting for it goes first (the critical
// path), then the one more tasks wait for: finishing it unblocks the most;
// then file order.
type urgency struct {
	f          *TaskFile
	priority   []int
	chain      []int
	dependents [][]int
	// waiting is how many unfinished tasks wait for a task, directly or
	// through others, counted when two tasks tie on everything before it
	// (-1 until then), since counting it for every task of a long chain
	// is quadratic.
	waiting []int
	seen    []int // the walk that last reached each task, for waitingOf
	walks   int
}

// maxWaiting bounds the count of tasks waiting for one task: past it
// both tasks compared unblock plenty, file order decides, and a list of a
// hundred thousand chained tasks is still ordered in linear time.
const maxWaiting = 1000

// blocking measures, for every task, how much open work waits for it:
// its chain is the length of the longest chain of unfinished tasks that
// depend on it, one after another (0 when none does). Dependents of done
// and skipped tasks are left out, and a task ralph would take next has all
// its dependencies done, so taking it changes no other task's measure:
// Order measures once. A cycle is cut where it closes; run refuses a list
// with one anyway.
func (f *TaskFile) blocking(ids map[string]int) *urgency {
	n := len(f.tasks)
	b := &urgency{f: f, priority: make([]int, n), chain: make([]int, n), dependents: make([][]int, n),
		waiting: make([]int, n), seen: make([]int, n)}
	for i := range f.tasks {
		b.priority[i], _ = f.tasks[i].priority()
		b.waiting[i] = -1
		if st := f.tasks[i].state; st == TaskDone || st == TaskSkipped {
			continue
		}
		for _, d := range f.tasks[i].depends() {
			if j, ok := ids[d]; ok && j != i {
				b.dependents[j] = append(b.dependents[j], i)
			}
		}
	}
	const unseen, visiting, seen = 0, 1, 2
	mark := make([]int, n)
	var walk func(i int)
	walk = func(i int) {
		mark[i] = visiting
		for _, j := range b.dependents[i] {
			if mark[j] == unseen {
				walk(j)
			}
			if mark[j] == seen {
				b.chain[i] = max(b.chain[i], b.chain[j]+1)
			}
		}
		mark[i] = seen
	}
	for i := range f.tasks {
		if mark[i] == unseen {
			walk(i)
		}
	}
	return b
}

// waitingOf counts every task that waits for i, once however many ways,
// up to maxWaiting.
func (b *urgency) waitingOf(i int) int {
	if b.waiting[i] >= 0 {
		return b.waiting[i]
	}
	b.walks++
	b.seen[i] = b.walks
	count := 0
	stack := append([]int(nil), b.dependents[i]...)
	for len(stack) > 0 && count < maxWaiting {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b.seen[j] == b.walks {
			continue
		}
		b.seen[j] = b.walks
		count++
		stack = append(stack, b.dependents[j]...)
	}
	b.waiting[i] = count
	return count
}

// compare is the order of Ready between tasks i and j.
func (b *urgency) compare(i, j int) int {
	return cmp.Or(cmp.Compare(b.priority[i], b.priority[j]),
		cmp.Compare(b.chain[j], b.chain[i]),
		cmp.Compare(b.waitingOf(j), b.waitingOf(i)),
		cmp.Compare(i, j))
}

// Order is the order in which ralph would take the open tasks if each
// were done at its first attempt, one at a time: Next, again and again.
// Tasks that can never start (a dependency that is no task, a cycle, a
// failed task) are left out; ralph plans --graph lists them apart.
//
// It takes Next's choices without calling Next for each (which would be
// quadratic): a task becomes ready when the last of its dependencies is
// taken, and the ready tasks wait in a heap in Ready's order. Tasks are
// known by their place, not their id, so two tasks sharing an id (which
// Validate names) are each taken once.
func (f *TaskFile) Order() []Task {
	// g's records are copies: Order marks tasks done in them as it takes
	// them, which must not reach f's.
	g := &TaskFile{tasks: make([]*taskRec, len(f.tasks)), lines: f.lines, over: f.over, info: f.info}
	for i, r := range f.tasks {
		c := *r
		g.tasks[i] = &c
	}
	var out []Task
	// Tasks in progress come first, as if they were finishing now.
	for i := range g.tasks {
		if g.tasks[i].state == TaskInProgress {
			out = append(out, g.task(i))
			g.tasks[i].state = TaskDone
		}
	}
	ids := g.idIndex()
	b := g.blocking(ids)
	// unmet counts the dependencies of each open task not yet done; a
	// dependency that is no task is never met.
	unmet := make([]int, len(g.tasks))
	waiters := make([][]int, len(g.tasks))
	h := &taskHeap{less: func(i, j int) bool { return b.compare(i, j) < 0 }}
	for i := range g.tasks {
		r := g.tasks[i]
		if r.state != TaskOpen || r.title == "" {
			continue
		}
		for _, d := range r.depends() {
			j, ok := ids[d]
			switch {
			case !ok:
				unmet[i]++ // never met: the task never starts
			case g.tasks[j].state != TaskDone && g.tasks[j].state != TaskSkipped:
				unmet[i]++
				waiters[j] = append(waiters[j], i)
			}
		}
		if unmet[i] == 0 {
			heap.Push(h, i)
		}
	}
	for len(h.items) > 0 {
		i := heap.Pop(h).(int)
		out = append(out, g.task(i))
		g.tasks[i].state = TaskDone
		for _, w := range waiters[i] {
			if unmet[w]--; unmet[w] == 0 {
				heap.Push(h, w)
			}
		}
	}
	return out
}

// taskHeap is container/heap's min-heap of task places under less.
type taskHeap struct {
	items []int
	less  func(i, j int) bool
}

func (h *taskHeap) Len() int           { return len(h.items) }
func (h *taskHeap) Less(a, b int) bool { return h.less(h.items[a], h.items[b]) }
func (h *taskHeap) Swap(a, b int)      { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *taskHeap) Push(x any)         { h.items = append(h.items, x.(int)) }
func (h *taskHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// GraphProblems are the mistakes in the dependencies that keep a task
// from ever starting: a depends= naming no task, and cycles. ralph run
// refuses a list with any before it starts work (exit 2).
func (f *TaskFile) GraphProblems() []string {
	ids := f.idIndex()
	var out []string
	for i := range f.tasks {
		r := f.tasks[i]
		for _, d := range r.depends() {
			if _, ok := ids[d]; !ok {
				out = append(out, fmt.Sprintf("Task %s (line %d) depends on %q, which is not a task id, so it will never be ready.", r.id(), r.line+1, d))
			}
		}
	}
	return append(out, f.cycles(ids)...)
}

// Next returns the most urgent ready task, the first that Ready returns.
func (f *TaskFile) Next() (Task, bool) {
	if r := f.Ready(nil); len(r) > 0 {
		return r[0], true
	}
	return Task{}, false
}

// Counts returns how many tasks are in each state.
func (f *TaskFile) Counts() memory.TaskCounts {
	if f.memo != nil {
		if c := f.memo.counts.Load(); c != nil {
			return *c
		}
	}
	var c memory.TaskCounts
	for i := range f.tasks {
		count(&c, f.tasks[i].state, 1)
	}
	c.Total = len(f.tasks)
	if f.memo != nil {
		f.memo.counts.Store(&c)
	}
	return c
}

// count adds d to c's count of tasks in state s.
func count(c *memory.TaskCounts, s TaskState, d int) {
	switch s {
	case TaskOpen:
		c.Open += d
	case TaskInProgress:
		c.InProgress += d
	case TaskDone:
		c.Done += d
	case TaskFailed:
		c.Failed += d
	case TaskSkipped:
		c.Skipped += d
	}
}

// DuplicateIDs says, one sentence per id, which ids more than one task
// uses: only the first of those tasks can be named by it.
func (f *TaskFile) DuplicateIDs() []string {
	lines := map[string][]string{}
	var order []string
	for i := range f.tasks {
		id := f.tasks[i].id()
		if len(lines[id]) == 0 {
			order = append(order, id)
		}
		lines[id] = append(lines[id], strconv.Itoa(f.tasks[i].line+1))
	}
	var out []string
	for _, id := range order {
		if l := lines[id]; len(l) > 1 {
			out = append(out, fmt.Sprintf("Task id %q is used on lines %s; only the first of them can be addressed by it.",
				id, strings.Join(l, ", ")))
		}
	}
	return out
}

// Validate returns one sentence per problem a person should fix: duplicate
// ids, ids that look like line references, unknown dependencies, dependency
// cycles, numbers that are not numbers, and checkboxes without a title. None
// of them stops ralph; they explain why a task is never picked or cannot be
// addressed.
func (f *TaskFile) Validate() []string {
	out := f.DuplicateIDs()
	ids := f.idIndex()
	for i := range f.tasks {
		r := f.tasks[i]
		who := fmt.Sprintf("Task %s (line %d)", r.id(), r.line+1)
		if id := r.id(); isLineRef(id) && id != "L"+strconv.Itoa(r.line+1) {
			out = append(out, fmt.Sprintf("Task id %q on line %d has the form ralph uses for line numbers, "+
				"so %q may find the task on line %s instead; rename it.", id, r.line+1, id, id[1:]))
		}
		if r.title == "" {
			out = append(out, fmt.Sprintf("Line %d has a checkbox but no title, so ralph will not pick it.", r.line+1))
		}
		for _, d := range r.depends() {
			if _, ok := ids[d]; !ok {
				out = append(out, fmt.Sprintf("%s depends on %q, which is not a task id, so it will never be ready.", who, d))
			}
		}
		if _, err := r.priority(); err != nil {
			v, _ := r.metaGet("priority")
			out = append(out, fmt.Sprintf("%s has priority %q, which is not a whole number; it counts as %d.",
				who, v, DefaultTaskPriority))
		}
		if v, ok := r.metaGet("attempts"); ok {
			if _, err := strconv.Atoi(v); err != nil {
				out = append(out, fmt.Sprintf("%s has attempts %q, which is not a whole number; it counts as 0.", who, v))
			}
		}
	}
	return append(out, f.cycles(ids)...)
}

// cycleNamed is how many tasks of a dependency cycle its sentence names.
const cycleNamed = 10

// cycles finds the strongly connected components of the dependency graph
// (Tarjan's algorithm) and describes each one that is a cycle: its tasks
// wait on each other, so none of them can ever become ready.
func (f *TaskFile) cycles(ids map[string]int) []string {
	n := len(f.tasks)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	var out []string
	next := 1
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		self := false
		for _, d := range f.tasks[v].depends() {
			w, ok := ids[d]
			switch {
			case !ok:
			case w == v:
				self = true
			case index[w] == 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		switch {
		case len(comp) > 1:
			slices.Sort(comp) // name the tasks in file order, as a person reads them
			// A cycle of thousands (a generated list) is named by its
			// first tasks: a sentence of every id was a line of half a
			// megabyte that no person reads.
			names := make([]string, 0, min(len(comp), cycleNamed))
			for _, w := range comp[:min(len(comp), cycleNamed)] {
				names = append(names, f.tasks[w].id())
			}
			list := strings.Join(names, ", ")
			if len(comp) > cycleNamed {
				list += fmt.Sprintf(" and %d more (%d in all)", len(comp)-cycleNamed, len(comp))
			}
			out = append(out, fmt.Sprintf("Tasks %s depend on each other in a cycle, so none of them will ever be ready.", list))
		case self:
			out = append(out, fmt.Sprintf("Task %s depends on itself, so it will never be ready.", f.tasks[v].id()))
		}
	}
	for v := range f.tasks {
		if index[v] == 0 && ids[f.tasks[v].id()] == v {
			visit(v)
		}
	}
	return out
}

// Notes returns the lines under task id that belong to it and are not
// tasks themselves (acceptance criteria, hints a person wrote): those
// before its first subtask, with their common indentation removed. It is
// "" for a task without notes or an id that names no task.
func (f *TaskFile) Notes(id string) string {
	i := f.find(id)
	if i < 0 {
		return ""
	}
	r := f.tasks[i]
	end := f.itemEnd(i, r.width)
	var lines []string
	for j := r.line + 1; j < end; j++ {
		if f.info[j].kind == kindTask {
			break
		}
		lines = append(lines, f.text(j))
	}
	return dedent(lines)
}

// dedent joins lines without the indentation they all share, and without
// blank lines at either end.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for k, l := range lines {
		switch {
		case common <= 0:
		case len(l) >= common:
			lines[k] = l[common:]
		default: // a blank line shorter than the indentation
			lines[k] = ""
		}
	}
	return strings.Join(lines, "\n")
}
