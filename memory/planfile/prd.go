package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/afero"
)

// `ralph import prd.json` brings a ralph-tui task file into RALPH_TASKS.md,
// so people moving from ralph-tui keep their plan. The format is ralph-tui's
// JSON tracker (src/plugins/trackers/builtin/json/index.ts): a top-level
// name (or project), description and branchName, and userStories, each
// with id, title, description, acceptanceCriteria, priority (lower is
// sooner), passes, dependsOn and notes. Other fields are ignored.
//
// Each story becomes one task through the same edits ralph makes everywhere
// else (Add, SetState, SetMeta), so a person's bytes survive an import just
// as they survive a run. A story's text goes under its task as indented
// plain lines, never as checkboxes, so people and the model can read the
// acceptance criteria without ralph mistaking them for work of their own.

// ImportResult says what an import did. Warnings are sentences about the
// prd.json a person may want to fix; none of them stops the import.
type ImportResult struct {
	Added, Updated, Unchanged int
	Warnings                  []string
}

type prdDoc struct {
	Name        string      `json:"name"`
	Project     string      `json:"project"` // what ralph-tui accepts in place of name
	Description string      `json:"description"`
	BranchName  string      `json:"branchName"`
	UserStories *[]prdStory `json:"userStories"` // a pointer, so a missing list is told from an empty one

	// plain keeps each title as written, without the story's id before
	// it (ImportPlan: a plan's ids are short words of its own).
	plain bool
}

type prdStory struct {
	ID                 any             `json:"id"`
	Title              string          `json:"title"`
	Description        string          `json:"description"`
	AcceptanceCriteria []string        `json:"acceptanceCriteria"`
	Priority           json.RawMessage `json:"priority"`
	Passes             bool            `json:"passes"`
	DependsOn          []any           `json:"dependsOn"`
	Dependencies       []any           `json:"dependencies"` // the name some other PRD tools use
	Notes              string          `json:"notes"`
	CompletionNotes    string          `json:"completionNotes"` // ralph-tui's older name for notes

	id   string   // ID as a string
	deps []string // DependsOn and Dependencies as strings
}

// storyID reads an id, which hand-made and generated files alike sometimes
// write as a number (1, 2, 3) rather than a string. null and a missing id
// are empty; anything else is an error naming the story.
func storyID(v any, where string) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("prd.json: %s must be a string, not %s", where, jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "true or false"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ImportPRD merges the stories of a ralph-tui prd.json (data) into root's
// RALPH_TASKS.md. A story whose id is already a task's id updates that task
// instead of adding another, so importing the same file twice changes
// nothing the second time. Bad JSON is an error naming the line and column,
// and the file is then left as it was.
func ImportPRD(fs afero.Fs, root string, data []byte) (ImportResult, error) {
	doc, err := parsePRD(data)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	_, err = UpdateTasks(fs, root, func(f *TaskFile) error {
		res = ImportResult{}
		return f.importPRD(doc, &res)
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

// ImportPlan is ImportPRD for a plan ralph plan wrote (the same JSON):
// each title is kept as written, without its id before it.
func ImportPlan(fs afero.Fs, root string, data []byte) (ImportResult, error) {
	doc, err := parsePRD(data)
	if err != nil {
		return ImportResult{}, err
	}
	doc.plain = true
	var res ImportResult
	_, err = UpdateTasks(fs, root, func(f *TaskFile) error {
		res = ImportResult{}
		return f.importPRD(doc, &res)
	})
	return res, err
}

func parsePRD(data []byte) (*prdDoc, error) {
	// A byte-order mark, which some Windows editors write, is not JSON but
	// not a mistake either; the positions below count from after it, as
	// editors show them.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var doc prdDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, prdJSONError(data, err)
	}
	// Anything after the object means the file is not the one JSON value
	// it should be, often two documents pasted together.
	if _, err := dec.Token(); err == nil {
		at := int(dec.InputOffset())
		line, col := lineCol(data, at-1)
		return nil, fmt.Errorf("prd.json line %d, column %d: unexpected text after the end of the JSON object", line, col)
	} else if !errors.Is(err, io.EOF) {
		return nil, prdJSONError(data, err)
	}
	if doc.UserStories == nil {
		return nil, errors.New("prd.json has no userStories list, so there is nothing to import")
	}
	for i := range *doc.UserStories {
		s := &(*doc.UserStories)[i]
		var err error
		if s.id, err = storyID(s.ID, fmt.Sprintf("the id of story %d", i+1)); err != nil {
			return nil, err
		}
		for k, d := range slices.Concat(s.DependsOn, s.Dependencies) {
			dep, err := storyID(d, fmt.Sprintf("dependency %d of story %d", k+1, i+1))
			if err != nil {
				return nil, err
			}
			s.deps = append(s.deps, dep)
		}
	}
	return &doc, nil
}

// prdJSONError turns a decoding error into one sentence with the position a
// person's editor shows.
func prdJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, int(syn.Offset)-1)
		return fmt.Errorf("prd.json line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := lineCol(data, valueStart(data, int(typ.Offset)))
		want := map[string]string{"string": "a string", "bool": "true or false", "[]string": "a list of strings",
			"[]planfile.prdStory": "a list of stories", "planfile.prdDoc": "an object", "planfile.prdStory": "an object",
			"[]interface {}": "a list"}[typ.Type.String()]
		if want == "" {
			want = typ.Type.String()
		}
		field := typ.Field
		if field == "" {
			field = "the top level"
		}
		return fmt.Errorf("prd.json line %d, column %d: %s must be %s, not %s", line, col, field, want, typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, len(data))
		return fmt.Errorf("prd.json line %d, column %d: the JSON ends before the object is complete", line, col)
	}
	return fmt.Errorf("prd.json: %w", err)
}

// valueStart backs up from the decoder's offset, which is just past the
// offending value, to where that value begins, so the column points at it.
// Values that are not containers are short, so the scan is short too.
func valueStart(data []byte, end int) int {
	end = min(max(end, 0), len(data))
	i := end - 1
	for i > 0 && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i--
	}
	if i >= 0 && i < len(data) && data[i] == '"' {
		// A string: find the quote that opens it, skipping escaped ones.
		for j := i - 1; j >= 0; j-- {
			if data[j] == '"' {
				k := j - 1
				for k >= 0 && data[k] == '\\' {
					k--
				}
				if (j-k-1)%2 == 0 {
					return j
				}
			}
		}
		return i
	}
	for i > 0 && !strings.ContainsRune(",:[{ \t\r\n", rune(data[i-1])) {
		i--
	}
	return max(i, 0)
}

// lineCol returns the 1-based line and column (in characters) of byte
// offset at.
func lineCol(data []byte, at int) (int, int) {
	at = min(max(at, 0), len(data))
	before := data[:at]
	line := bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// startsWithWord reports whether title already begins with the id, as in
// "US-001 Add login", so the id is not written twice.
func startsWithWord(title, id string) bool {
	rest, ok := strings.CutPrefix(title, id)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
}

// updateFromStory brings an existing task in line with its story without
// taking anything back: a passing story marks the task done, but a story
// that does not pass never reopens a task that is done, since finished work
// outranks an old export. Priority and dependencies are set only when the
// story has them, so ones a person added by hand survive. The title and the
// lines under the task are the person's and are left alone.
func (f *TaskFile) updateFromStory(k int, passes bool, meta map[string]string) (bool, error) {
	before := f.text(f.tasks[k].line)
	if passes && f.tasks[k].state != TaskDone {
		if err := f.setState(k, TaskDone, stateChar[TaskDone]); err != nil {
			return false, err
		}
	}
	for _, key := range []string{"priority", "depends"} {
		if v, ok := meta[key]; ok {
			if err := f.setMeta(k, key, v, false); err != nil {
				return false, err
			}
		}
	}
	return f.text(f.tasks[k].line) != before, nil
}

// prdPriority reads a priority that is a whole number, or a string holding
// one. ralph-tui writes 1-based numbers, lower sooner, which is ralph's
// order too. The bound keeps the number an int on any platform.
func prdPriority(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		// "2" is as clear as 2; "high" is not, and ralph will not guess
		// what number a word stands for.
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(str))
		return n, err == nil && n >= -1e9 && n <= 1e9
	}
	if v != math.Trunc(v) || math.Abs(v) > 1e9 {
		return 0, false
	}
	return int(v), true
}

// sanitizeTaskID makes s a ralph task id: letters, digits, '-' and '_'.
// Runs of anything else become one '-', so "US 001" and "US/001" read as
// "US-001". An id that looks like ralph's "L<line>" references is
// prefixed, or it could find the wrong task.
func sanitizeTaskID(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	id := strings.Trim(b.String(), "-")
	if isLineRef(id) {
		id = "story-" + id
	}
	return id
}

// storyBody is the text under a story's task: its description, its
// acceptance criteria as plain bullets, and its notes.
func storyBody(description string, criteria []string, notes string) []string {
	var out []string
	out = append(out, textLines(description)...)
	var crit []string
	for _, c := range criteria {
		if c = criterionText(c); c != "" {
			crit = append(crit, "- "+c)
		}
	}
	if len(crit) > 0 {
		out = append(out, "Acceptance criteria:")
		out = append(out, crit...)
	}
	if n := textLines(notes); len(n) > 0 {
		n[0] = "Notes: " + n[0]
		out = append(out, n...)
	}
	return out
}

// criterionText is one criterion on one line, without the bullet or
// checkbox that PRDs converted from markdown often keep ("- [ ] Tests
// pass"): under a task it is a plain bullet, and a checkbox there would read
// as a subtask to people, if not to ralph.
func criterionText(c string) string {
	c = strings.Join(strings.Fields(c), " ")
	if n := listMarker(c); n > 0 && n < len(c) && c[n] == ' ' {
		c = c[n+1:]
	}
	if len(c) >= 3 && c[0] == '[' && c[2] == ']' && (len(c) == 3 || c[3] == ' ') {
		if _, ok := charState[c[1]]; ok {
			c = strings.TrimSpace(c[3:])
		}
	}
	return c
}

// textLines splits prose into its non-empty lines, trimmed; blank lines
// would end the task's list item for a markdown reader.
func textLines(s string) []string {
	var out []string
	for l := range strings.Lines(strings.ReplaceAll(s, "\r", "\n")) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// plainLine returns indent+s escaped so that the task parser reads it as
// prose or a plain list item: never a task, a heading (which would end the
// task's item, so the next Add would land in the wrong place), a code fence
// or an HTML comment (which would hide the tasks after it). A backslash is
// the markdown way to say "this character is literal", so the rendered text
// reads the same.
func plainLine(indent, s string) string {
	if _, _, ok := fenceOpen(s); ok || isHeading(s) || strings.HasPrefix(s, "<!--") {
		s = `\` + s
	}
	line := indent + s
	if r, ok := parseTaskLine(line); ok {
		k := r.stateAt - 1 // the '['
		line = line[:k] + `\` + line[k:]
	}
	return line
}

// insertBody puts a story's lines under the task on line index at, indented
// one level deeper than the task, and checks that the parse still sees the
// same tasks.
func (f *TaskFile) insertBody(at int, body []string) error {
	if len(body) == 0 {
		return nil
	}
	task := f.text(at)
	indent := task[:len(task)-len(strings.TrimLeft(task, " \t"))] + "  "
	lines := make([]string, len(body))
	for i, b := range body {
		lines[i] = plainLine(indent, b)
	}
	return f.insertPlain(at+1, lines)
}

// insertHeader names the project above the first imported tasks when the
// file has none yet: "# name" in a file without headings, "## name" under
// the template's "# Tasks". A file that already has tasks gets none, since a
// heading after its last task would end that list and split it in two.
func (f *TaskFile) insertHeader(doc *prdDoc) error {
	name := strings.Join(strings.Fields(doc.Name), " ")
	if name == "" {
		name = strings.Join(strings.Fields(doc.Project), " ")
	}
	desc := textLines(doc.Description)
	branch := strings.TrimSpace(doc.BranchName)
	level := "#"
	for _, in := range f.info {
		if in.kind == kindHeading {
			level = "##"
		}
	}
	if name == "" {
		if level == "##" && len(desc) == 0 && branch == "" {
			return nil
		}
		name = "Tasks"
	}
	at := len(f.lines)
	for i, in := range f.info {
		if in.unclosed {
			at = i // where Add will put the first task, outside the open block
		}
	}
	var lines []string
	if at > 0 && strings.TrimSpace(f.text(at-1)) != "" {
		lines = append(lines, "")
	}
	lines = append(lines, level+" "+plainLine("", name), "")
	if len(desc) > 0 {
		for _, d := range desc {
			lines = append(lines, plainLine("", d))
		}
		lines = append(lines, "")
	}
	if branch != "" {
		lines = append(lines, "Branch: `"+strings.ReplaceAll(branch, "`", "")+"`", "")
	}
	return f.insertPlain(at, lines)
}

// insertPlain inserts lines that are not tasks at index at, with the file's
// line ending, keeping a file that ended without a newline that way. If the
// parse then sees different tasks, the insertion is undone and an error
// returned: the lines were meant to be prose.
func (f *TaskFile) insertPlain(at int, texts []string) error {
	f.ownLines()
	saved := slices.Clone(f.lines)
	f.relaid = true
	before := len(f.tasks)
	eol := f.lineEnding()
	recs := make([]lineRec, len(texts))
	for i, t := range texts {
		recs[i] = lineRec{text: t, eol: eol}
	}
	if at == len(f.lines) && at > 0 {
		switch prev := &f.lines[at-1]; prev.eol {
		case "":
			prev.eol, recs[len(recs)-1].eol = eol, ""
		case "\r":
			prev.eol = "\r\n"
		}
	}
	f.lines = slices.Insert(f.lines, at, recs...)
	f.reparse()
	ok := len(f.tasks) == before
	for i := at; ok && i < at+len(recs); i++ {
		switch f.info[i].kind {
		case kindText, kindList, kindBlank, kindHeading:
		default:
			ok = false
		}
	}
	if !ok {
		f.lines = saved
		f.reparse()
		return fmt.Errorf("internal error: text inserted at line %d would change the task list", at+1)
	}
	return nil
}
