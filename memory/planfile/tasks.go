package planfile

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/ralph-dev/ralph/memory"
)

// RALPH_TASKS.md is a GitHub-style checkbox list that people write and edit
// by hand, so ralph treats it as a document it may annotate, never as data
// it owns. The file is kept as its raw lines, each with its own terminator;
// the parse only records where the tasks are. An edit rewrites the few bytes
// ralph owns (the state character and the trailing ralph comment) and
// leaves every other byte, including line endings and trailing spaces,
// exactly as the person wrote it.
//
// A task line is
//
//	<indent><bullet> [<c>] <title> <!-- ralph:id=t3 priority=1 depends=t1,t2 -->
//
// where the bullet is -, * or + or a number followed by . or ), c is one of
// the characters below, and the comment is optional. Lines inside fenced
// code or a multi-line HTML comment are not tasks, and a deeper-indented
// task is a subtask of the one above it.

// DefaultTaskPriority is the priority of a task without priority=N. Lower
// numbers are more urgent, so untagged tasks come after any a person marked.
const DefaultTaskPriority = 100

// TaskState is where a task stands, spelled as in session.json.
type TaskState string

// The task states and, in comments, the checkbox character for each. Open and
// done are what people write; the other three are ralph's additions.
const (
	TaskOpen       TaskState = "open"        // [ ]
	TaskDone       TaskState = "done"        // [x] or [X]
	TaskInProgress TaskState = "in_progress" // [~]
	TaskFailed     TaskState = "failed"      // [!]
	TaskSkipped    TaskState = "skipped"     // [-]
)

// ErrTaskNotFound is wrapped, with the id, when an edit names no task.
var ErrTaskNotFound = errors.New("task not found")

// Task is a copy of one task line's parse; changing it changes nothing.
type Task struct {
	ID       string // the meta id, or "L<line>" until AssignIDs gives it one
	Title    string // the text after the checkbox without the ralph comment, trimmed
	State    TaskState
	Line     int // 1-based
	Depth    int // 0 at top level; counts only task ancestors
	Parent   string
	Priority int
	Depends  []string
	// Attempts is how many attempts the task has had: its attempts=N,
	// or, without one, 1 for a task that is not open (a first attempt
	// writes no attempts=, see StartAttempt) and 0 for an open one.
	Attempts int
	Meta     map[string]string // every meta key; never nil
}

// TaskFile is a parsed RALPH_TASKS.md. It is not safe for concurrent use;
// UpdateTasks serialises the edits that go to disk.
type TaskFile struct {
	lines []lineRec
	info  []lineInfo
	tasks []*taskRec
	// shared says the slices are also another TaskFile's (the parse
	// cache's, see tasks_cache.go): the first edit copies the task
	// records (own), so a file handed out can be edited without touching
	// the copy kept for the next read.
	shared bool
	// over holds the text of the lines setLine replaced while lines was
	// shared, by line index; text reads through it. Copying every line
	// at every edit of a shared file was two copies of the whole plan a
	// task (on ten thousand tasks 320 KB of strings each, and a tenth of
	// the loop's time with the collection that followed); the lines
	// themselves are copied once over holds overMax of them (ownLines).
	// Copies share over until either is edited (own copies it).
	over map[int]string
	// linesOwn says lines is f's alone (ownLines made it), so that
	// setLine writes it in place.
	linesOwn bool
	// ids is idIndex's map, built once per parse and dropped when an edit
	// changes an id; it is never written after it is built, so copies
	// share it. dupIDs says two tasks have the same id, missingIDs that
	// a task has none in its ralph comment yet.
	ids map[string]int
	// idOf and prios are each task's id and priority, built with ids
	// and dropped with it; never written in place, so shared copies
	// may hold them.
	idOf               []string
	prios              []int
	dupIDs, missingIDs bool
	// anyDepends says a task names a dependency; built with ids.
	anyDepends bool
	// edited says f was changed since it was parsed (own), so that an
	// update whose edit changed nothing need not lay out the whole file
	// again to find that out (updateTaskFile).
	edited bool
	// spliced are the lines setLine replaced since the parse, each with
	// the length it had, and relaid says lines were inserted: until then
	// the file's bytes are the parsed bytes with those lines written over
	// them (patch), which on ten thousand tasks costs a copy rather than
	// laying out every line again.
	spliced []splice
	relaid  bool
	// grown is the size AssignIDs found its ids would take the file to,
	// past what ralph reads of it, when it gave none: updateTaskFile
	// refuses the update with it (grownTooLarge), unwritten.
	grown int64
	// memo keeps what is worked out from the parse alone, for every copy
	// that shares it (share): the loop asks for the counts at every save,
	// each time of a fresh copy from the parse cache, and on ten thousand
	// tasks each count was a pass over all of them. An edit gives the
	// copy a memo of its own (own).
	memo *parseMemo
}

// parseMemo is what is worked out from one parse, shared by the copies
// of it, which different goroutines may hold.
type parseMemo struct {
	counts atomic.Pointer[memory.TaskCounts]
}

// own makes f's slices f's alone before an edit (see shared).
func (f *TaskFile) own() {
	prev := f.memo
	f.edited, f.memo = true, &parseMemo{}
	// The counts carry over, and setLine keeps them: the loop asks for
	// them at every save, right after an edit of one task, and counting
	// ten thousand again each time was a pass over all of them.
	if prev != nil {
		if c := prev.counts.Load(); c != nil {
			kept := *c
			f.memo.counts.Store(&kept)
		}
	}
	if !f.shared {
		return
	}
	// info is not copied: no edit writes into it (reparse makes a new
	// one), and a record is replaced, never changed in place. Nor are
	// the lines: a replaced one goes to over (setLine).
	f.tasks, f.over = slices.Clone(f.tasks), maps.Clone(f.over)
	f.shared = false
}

// overMax is how many replaced lines over holds before ownLines folds
// them into a copy of the lines: looking one up stays a small map's, and
// the copy costs once per overMax edits what it cost at each.
const overMax = 256

// ownLines makes f's lines f's alone, with what over held written in, for
// an edit that inserts or changes a line in place.
func (f *TaskFile) ownLines() {
	f.own()
	if f.linesOwn {
		return
	}
	lines := slices.Clone(f.lines)
	for i, t := range f.over {
		lines[i].text = t
	}
	f.lines, f.over, f.linesOwn = lines, nil, true
}

// text is line i's text, as the edits left it.
func (f *TaskFile) text(i int) string {
	if t, ok := f.over[i]; ok {
		return t
	}
	return f.lines[i].text
}

// share returns a copy of f that shares its slices, both marked shared,
// so that whichever is edited first copies them.
func (f *TaskFile) share() *TaskFile {
	f.shared, f.linesOwn = true, false
	g := *f
	return &g
}

// splice is one line setLine replaced, and the length of its text before.
type splice struct{ line, was int }

// lineRec is one line as it was read: its content and its own terminator,
// which is "\n", "\r\n", or for the last line "" or a lone "\r".
type lineRec struct {
	text, eol string
}

// lineKind classifies a line for nesting and for where Add may insert.
type lineKind uint8

const (
	kindBlank   lineKind = iota
	kindText             // prose, or a continuation line
	kindHeading          // an ATX heading, which ends any list
	kindList             // a list item without a checkbox
	kindTask             // a task line
	kindOpen             // opens a fenced code block or a multi-line HTML comment
	kindInBlock          // inside such a block, including its closing line
)

type lineInfo struct {
	kind     lineKind
	width    int  // indentation in columns, tabs to multiples of four
	unclosed bool // kindOpen only: the block runs to the end of the file
}

// taskRec is a task line's parse, with byte offsets into the line's text so
// edits can splice rather than re-render.
type taskRec struct {
	line      int // 0-based
	width     int
	indent    string
	bullet    string
	after     int // offset just past the closing ']'
	stateAt   int // offset of the state character
	state     TaskState
	title     string
	meta      []metaTok
	metaStart int // offset of the ralph comment's "<!--", or -1
	metaEnd   int // offset just past its "-->"
	bodyEnd   int // length of the text without trailing whitespace
	depth     int
	parent    int // index into tasks, -1 at top level
}

// metaTok is one word of a ralph comment. Words without '=' are kept as
// bare keys so a hand-written comment survives a rewrite.
type metaTok struct {
	key, val string
	bare     bool
}

func (t metaTok) String() string {
	if t.bare {
		return t.key
	}
	return t.key + "=" + t.val
}

var charState = map[byte]TaskState{' ': TaskOpen, 'x': TaskDone, 'X': TaskDone,
	'~': TaskInProgress, '!': TaskFailed, '-': TaskSkipped}

var stateChar = map[TaskState]byte{TaskOpen: ' ', TaskDone: 'x', TaskInProgress: '~',
	TaskFailed: '!', TaskSkipped: '-'}

// ParseTasks parses any bytes. Lines it does not recognise are kept as text,
// so it cannot fail, and Bytes returns data unchanged until an edit.
func ParseTasks(data []byte) *TaskFile {
	f := &TaskFile{lines: splitLines(string(data)), linesOwn: true}
	f.reparse()
	return f
}

func splitLines(s string) []lineRec {
	out := make([]lineRec, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			// A lone CR at the very end is half a CRLF (a file cut short,
			// or an editor that has not written the LF yet), so it ends
			// the line rather than belonging to it. Otherwise the line
			// would change meaning when Add completes the CRLF.
			ln := lineRec{text: s}
			if strings.HasSuffix(s, "\r") {
				ln.text, ln.eol = s[:len(s)-1], "\r"
			}
			out = append(out, ln)
			break
		}
		ln := lineRec{text: s[:i], eol: "\n"}
		if strings.HasSuffix(ln.text, "\r") {
			ln.text, ln.eol = ln.text[:i-1], "\r\n"
		}
		out = append(out, ln)
		s = s[i+1:]
	}
	return out
}

// Bytes returns the file's current content.
func (f *TaskFile) Bytes() []byte {
	n := 0
	for i, l := range f.lines {
		n += len(f.text(i)) + len(l.eol)
	}
	b := make([]byte, 0, n)
	for i, l := range f.lines {
		b = append(b, f.text(i)...)
		b = append(b, l.eol...)
	}
	return b
}

// reparse classifies every line and rebuilds the task list. Code fences and
// multi-line HTML comments hide task-like lines, because a person who fences
// or comments out "- [ ] x" does not mean it as a task.
func (f *TaskFile) reparse() {
	if len(f.over) > 0 {
		f.ownLines()
	}
	f.ids, f.memo = nil, &parseMemo{}
	f.info = make([]lineInfo, len(f.lines))
	// Every task line has a '[', so counting them sizes the slice once.
	brackets := 0
	for _, ln := range f.lines {
		if strings.IndexByte(ln.text, '[') >= 0 {
			brackets++
		}
	}
	f.tasks = make([]*taskRec, 0, brackets)
	type nest struct{ width, task int }
	var stack []nest
	var (
		inBlock            bool
		fence              bool // false: an HTML comment
		fenceCh            byte
		fenceLen, openWide int
		openAt             int
		prevBlank          = true
	)
	for i, ln := range f.lines {
		width, rest := indentOf(ln.text)
		blank := strings.TrimSpace(ln.text) == ""
		f.info[i].width = width
		if inBlock {
			// A block opened inside a list item ends with the item, which a
			// less indented line ends; a block opened at the margin ends
			// only at its closing line.
			if blank || width >= openWide {
				f.info[i].kind = kindInBlock
				if fence && isFenceClose(rest, fenceCh, fenceLen) ||
					!fence && strings.Contains(ln.text, "-->") {
					inBlock = false
				}
				continue
			}
			inBlock = false
		}
		if blank {
			prevBlank = true
			continue // kindBlank
		}
		afterBlank := prevBlank
		prevBlank = false
		kind := kindText
		if ch, n, ok := fenceOpen(rest); ok {
			kind, inBlock, fence, fenceCh, fenceLen = kindOpen, true, true, ch, n
		} else if width <= 3 && strings.HasPrefix(rest, "<!--") && !strings.Contains(rest[4:], "-->") {
			kind, inBlock, fence = kindOpen, true, false
		}
		if inBlock {
			openWide, openAt = width, i
		}
		if kind == kindText {
			if r, ok := parseTaskLine(ln.text); ok {
				for len(stack) > 0 && stack[len(stack)-1].width >= width {
					stack = stack[:len(stack)-1]
				}
				r.line, r.depth, r.parent = i, len(stack), -1
				if len(stack) > 0 {
					r.parent = stack[len(stack)-1].task
				}
				stack = append(stack, nest{width, len(f.tasks)})
				f.tasks = append(f.tasks, &r)
				f.info[i].kind = kindTask
				continue
			}
			if isListItem(rest) {
				for len(stack) > 0 && stack[len(stack)-1].width >= width {
					stack = stack[:len(stack)-1]
				}
				f.info[i].kind = kindList
				continue
			}
			if width <= 3 && isHeading(rest) {
				kind = kindHeading
			}
		}
		// A heading, a block at the margin, or a paragraph at the margin
		// after a blank line ends every list above it. Indented prose, or
		// prose straight after an item (a lazy continuation line),
		// continues the item it is under.
		if kind == kindHeading || width == 0 && (kind == kindOpen || afterBlank) {
			stack = stack[:0]
		}
		f.info[i].kind = kind
	}
	if inBlock {
		f.info[openAt].unclosed = true
	}
}

// indentOf returns the leading whitespace's width in columns and the rest.
func indentOf(s string) (int, string) {
	w, i := 0, 0
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w, s[i:]
		}
	}
	return w, ""
}

func isSpTab(c byte) bool { return c == ' ' || c == '\t' }

// fenceOpen reports whether rest opens a code fence: three or more backticks
// (with no backtick in the info string, or it is inline code) or tildes.
func fenceOpen(rest string) (byte, int, bool) {
	if len(rest) < 3 || rest[0] != '`' && rest[0] != '~' {
		return 0, 0, false
	}
	ch, n := rest[0], 0
	for n < len(rest) && rest[n] == ch {
		n++
	}
	if n < 3 || ch == '`' && strings.IndexByte(rest[n:], '`') >= 0 {
		return 0, 0, false
	}
	return ch, n, true
}

func isFenceClose(rest string, ch byte, min int) bool {
	n := 0
	for n < len(rest) && rest[n] == ch {
		n++
	}
	return n >= min && strings.TrimSpace(rest[n:]) == ""
}

// listMarker returns the length of a list marker ("-", "*", "+", "1.",
// "12)") at the start of rest, or 0.
func listMarker(rest string) int {
	if rest == "" {
		return 0
	}
	if c := rest[0]; c == '-' || c == '*' || c == '+' {
		return 1
	}
	n := 0
	for n < len(rest) && n < 10 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 9 || n >= len(rest) || rest[n] != '.' && rest[n] != ')' {
		return 0
	}
	return n + 1
}

func isListItem(rest string) bool {
	n := listMarker(rest)
	return n > 0 && (n == len(rest) || isSpTab(rest[n]))
}

func isHeading(rest string) bool {
	n := 0
	for n < len(rest) && rest[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(rest) || isSpTab(rest[n]))
}

// parseTaskLine recognises "<indent><bullet> [c] title <!-- ralph:meta -->"
// on one line. It needs no context, so an edited line can be re-checked
// alone.
func parseTaskLine(text string) (taskRec, bool) {
	var r taskRec
	r.width, _ = indentOf(text)
	i := 0
	for i < len(text) && isSpTab(text[i]) {
		i++
	}
	r.indent = text[:i]
	n := listMarker(text[i:])
	if n == 0 {
		return r, false
	}
	r.bullet = text[i : i+n]
	j := i + n
	if j >= len(text) || !isSpTab(text[j]) {
		return r, false
	}
	for j < len(text) && isSpTab(text[j]) {
		j++
	}
	if j+3 > len(text) || text[j] != '[' || text[j+2] != ']' {
		return r, false
	}
	st, ok := charState[text[j+1]]
	if !ok {
		return r, false
	}
	r.stateAt, r.state, r.after = j+1, st, j+3
	if r.after < len(text) && !isSpTab(text[r.after]) {
		return r, false // "[ ]x" is text, as on GitHub
	}
	r.bodyEnd = len(text)
	for r.bodyEnd > r.after && (isSpTab(text[r.bodyEnd-1]) || text[r.bodyEnd-1] == '\r') {
		r.bodyEnd--
	}
	body := text[r.after:r.bodyEnd]
	r.metaStart, r.title = -1, strings.TrimSpace(body)
	if !strings.HasSuffix(body, "-->") {
		return r, true
	}
	k := strings.LastIndex(body, "<!--")
	if k < 0 || k+4 > len(body)-3 {
		return r, true
	}
	inner := body[k+4 : len(body)-3]
	words := strings.TrimLeft(inner, " \t")
	if !strings.HasPrefix(words, "ralph:") || strings.Contains(inner, "-->") {
		return r, true
	}
	words = words[len("ralph:"):]
	r.meta = make([]metaTok, 0, strings.Count(words, " ")+1)
	for w := range strings.FieldsSeq(words) {
		if e := strings.IndexByte(w, '='); e > 0 {
			r.meta = append(r.meta, metaTok{key: w[:e], val: w[e+1:]})
		} else {
			r.meta = append(r.meta, metaTok{key: w, bare: true})
		}
	}
	r.metaStart, r.metaEnd = r.after+k, r.bodyEnd
	r.title = strings.TrimSpace(body[:k])
	return r, true
}

// metaGet returns the first value of key; later duplicates are ignored.
func (r *taskRec) metaGet(key string) (string, bool) {
	for _, t := range r.meta {
		if t.key == key {
			return t.val, true
		}
	}
	return "", false
}

func (r *taskRec) id() string {
	if v, _ := r.metaGet("id"); v != "" {
		return v
	}
	return "L" + strconv.Itoa(r.line+1)
}

// attempts is the task's attempt count as Task.Attempts says: its
// attempts=N, else 1 once it left open (a first attempt is implied, so
// that starting it changes one byte of the file, not its length), else 0.
func (r *taskRec) attempts() int {
	if v, ok := r.metaGet(attemptsMeta); ok {
		n, _ := strconv.Atoi(v)
		return n
	}
	if r.state != TaskOpen {
		return 1
	}
	return 0
}

// priorityOf is r's priority, the default for one that does not parse.
func priorityOf(r *taskRec) int {
	p, _ := r.priority()
	return p
}

func (r *taskRec) priority() (int, error) {
	v, ok := r.metaGet("priority")
	if !ok {
		return DefaultTaskPriority, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil {
		return DefaultTaskPriority, err
	}
	return p, nil
}

func (r *taskRec) depends() []string {
	v, _ := r.metaGet("depends")
	if v == "" {
		return nil // most tasks: no slice to split and throw away
	}
	var out []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func (f *TaskFile) task(i int) Task {
	r := f.tasks[i]
	// Every string is cloned: a task's text is a slice of the whole file
	// as read, and a Task kept (the loop keeps a task's id and title for
	// as long as it runs, and its bookkeeping longer) would otherwise keep
	// that whole copy of the file alive, one per read: on a 10,000-task
	// plan that was 1.3 MB retained per task done.
	t := Task{ID: strings.Clone(r.id()), Title: strings.Clone(r.title), State: r.state, Line: r.line + 1, Depth: r.depth,
		Depends: r.depends(), Meta: make(map[string]string, len(r.meta))}
	for j, d := range t.Depends {
		t.Depends[j] = strings.Clone(d)
	}
	if r.parent >= 0 {
		t.Parent = strings.Clone(f.tasks[r.parent].id())
	}
	t.Priority, _ = r.priority()
	t.Attempts = r.attempts()
	for j := len(r.meta) - 1; j >= 0; j-- { // backwards, so the first duplicate wins
		t.Meta[strings.Clone(r.meta[j].key)] = strings.Clone(r.meta[j].val)
	}
	return t
}

// Tasks returns every task in file order.
func (f *TaskFile) Tasks() []Task {
	out := make([]Task, len(f.tasks))
	for i := range f.tasks {
		out[i] = f.task(i)
	}
	return out
}

// find resolves an id the way Find documents, returning a task index or -1.
func (f *TaskFile) find(id string) int {
	if i, ok := f.idIndex()[id]; ok {
		return i
	}
	if isLineRef(id) {
		n, _ := strconv.Atoi(id[1:])
		for i := range f.tasks {
			if f.tasks[i].line+1 == n {
				return i
			}
		}
	}
	if q := strings.TrimSpace(id); q != "" {
		for i := range f.tasks {
			if strings.EqualFold(f.tasks[i].title, q) {
				return i
			}
		}
	}
	return -1
}

// Find looks a task up by id, then by "L<line>" (any task, with an id or
// not, so a line number from a read-only view keeps working), then by a
// case-insensitive exact title, so a person can name a task the way they
// wrote it. The first match in file order wins.
func (f *TaskFile) Find(id string) (Task, bool) {
	if i := f.find(id); i >= 0 {
		return f.task(i), true
	}
	return Task{}, false
}

// isLineRef reports whether id has the "L<line>" form of tasks without ids.
func isLineRef(id string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "L"))
	return err == nil && n > 0 && strings.HasPrefix(id, "L") && id[1] != '+'
}

// validMetaWord reports whether s can be written inside a ralph comment and
// read back as the same word: no whitespace, and nothing that would end the
// comment or start another.
func validMetaWord(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsSpace) && !strings.Contains(s, "-->") && !strings.Contains(s, "<!--")
}
