package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// SearchParams are search's arguments. Beyond the pattern and the path
// they are ripgrep's options as Claude Code's Grep offers them, under
// ralph's own names (SearchArgsFromGrep maps one onto the other).
type SearchParams struct {
	Pattern      string `json:"pattern" required:"true" description:"Go regular expression, e.g. \"func \\\\w+Handler\" or \"(?i)todo\"."`
	Path         string `json:"path" description:"File or directory to search, relative to the project root. Default \".\"."`
	Glob         string `json:"glob" description:"e.g. \"*.{ts,tsx}\"; !x excludes"`
	Type         string `json:"type" description:"ripgrep's: go, py, js, …"`
	Output       string `json:"output" enum:"lines,files,count"`
	IgnoreCase   bool   `json:"ignore_case"`
	Before       *int   `json:"before"`
	After        *int   `json:"after"`
	Context      int    `json:"context"`
	OnlyMatching bool   `json:"only_matching"`
	LineNumbers  *bool  `json:"line_numbers"`
	Multiline    bool   `json:"multiline"`
	Limit        int    `json:"limit"`
	Skip         int    `json:"skip"`
}

// The output modes of search.
const (
	searchLines = "lines"
	searchFiles = "files"
	searchCount = "count"
)

func (t *Toolset) searchTool() Tool {
	return NewTool(Def("search"), t.search)
}

// searchQuery is a search's arguments checked and compiled.
type searchQuery struct {
	re            *regexp.Regexp
	mode          string
	before, after int
	only, numbers bool
	multiline     bool
	files         fileFilter
}

// newSearchQuery checks a's options and compiles its pattern with its
// flags; its errors are the sentences the model reads.
func newSearchQuery(a SearchParams) (*searchQuery, error) {
	q := &searchQuery{mode: a.Output, only: a.OnlyMatching, numbers: a.LineNumbers == nil || *a.LineNumbers, multiline: a.Multiline}
	switch q.mode {
	case "":
		q.mode = searchLines
	case searchLines, searchFiles, searchCount:
	default:
		return nil, fmt.Errorf("output must be lines, files or count, not %q", a.Output)
	}
	for _, n := range []struct {
		name string
		v    *int
	}{{"before", a.Before}, {"after", a.After}, {"context", &a.Context}, {"limit", &a.Limit}, {"skip", &a.Skip}} {
		if n.v != nil && *n.v < 0 {
			return nil, fmt.Errorf("%s must be 0 or more, not %d", n.name, *n.v)
		}
	}
	q.before, q.after = a.Context, a.Context
	if a.Before != nil {
		q.before = *a.Before
	}
	if a.After != nil {
		q.after = *a.After
	}
	flags := ""
	if a.IgnoreCase {
		flags += "i"
	}
	if a.Multiline {
		// ripgrep's -U with --multiline-dotall: . takes newlines, and ^
		// and $ still match at each line's ends.
		flags += "ms"
	}
	pattern := a.Pattern
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", err)
	}
	if !a.Multiline && literalNewline(re) {
		return nil, fmt.Errorf(`the pattern matches a newline (\n), which a line never holds; pass multiline: true to match across lines`)
	}
	q.re = re
	if q.files, err = newFileFilter(a.Glob, a.Type); err != nil {
		return nil, err
	}
	return q, nil
}

// literalNewline reports whether re holds a newline as a literal, which
// no line matches, as ripgrep refuses it without -U; a class that takes
// a newline ([^\n], \s) matches lines as it should.
func literalNewline(re *regexp.Regexp) bool {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return false
	}
	var holds func(r *syntax.Regexp) bool
	holds = func(r *syntax.Regexp) bool {
		return r.Op == syntax.OpLiteral && slices.Contains(r.Rune, '\n') || slices.ContainsFunc(r.Sub, holds)
	}
	return holds(parsed)
}

func (t *Toolset) search(ctx context.Context, raw json.RawMessage) workers.Result {
	var a SearchParams
	if err := decodeArgs(ToolSearch, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Pattern == "" {
		return errResult("search needs a non-empty pattern")
	}
	q, err := newSearchQuery(a)
	if err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	real, display, err := t.ws.Resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fsErrorResult(ToolSearch, display, err)
	}

	out := &searchOutput{skip: a.Skip, limit: a.Limit, budget: t.ws.MaxOutput(), numbers: q.numbers,
		grouped: q.mode == searchLines && q.before+q.after > 0, unit: [2]string{"line", "lines"}, most: maxSearchMatches, what: [2]string{"match", "matches"}}
	if q.mode != searchLines {
		out.unit, out.most, out.what = [2]string{"file", "files"}, maxListEntries, [2]string{"file", "files"}
	}
	err = t.ws.Walk(ctx, real, func(root *workers.RootDir, p string, d fs.DirEntry) error {
		// A file named by path is searched whatever glob and type say, as
		// ripgrep searches a file it is given.
		filtered := fi.IsDir()
		if d.IsDir() {
			if filtered && p != real && q.files.leavesOut(d.Name(), t.ws.RelSlash(p), relTo(real, p)) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks could lead outside the root
		}
		if filtered && !q.files.admits(d.Name(), t.ws.RelSlash(p), relTo(real, p)) {
			return nil
		}
		data, ok := t.readSearchable(root, p)
		if !ok {
			return nil
		}
		if !q.searchFile(out, t.ws.RelSlash(p), data) {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return errResult("search stopped: %v", err)
	}
	if out.seen == 0 {
		return workers.Result{Output: fmt.Sprintf("no matches for %q in %s", a.Pattern, display)}
	}
	return workers.Result{Output: out.String()}
}

// searchFile searches one file's data and writes what it finds to out;
// false means out is full and the search ends.
func (q *searchQuery) searchFile(out *searchOutput, rel string, data []byte) bool {
	var hits map[int][]string
	if q.multiline {
		var n int
		if hits, n = multilineHits(q.re, data, q.only && q.mode == searchLines); n == 0 {
			return true
		}
		if q.mode == searchCount {
			// ripgrep's --count counts matches in multiline mode.
			return out.add(fmt.Sprintf("%s:%d", rel, n), true)
		}
	}
	out.file()
	count := 0
	// ring holds the lines before a match not shown yet, for before;
	// after is how many lines after the last match are still to be shown.
	var ring []numbered
	after := 0
	for lineNo, off := 1, 0; off < len(data); lineNo++ {
		start := off
		line := data[start:]
		off = len(data)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, off = line[:i], start+i+1
		}
		var hit bool
		var parts []string
		switch {
		case q.multiline:
			parts, hit = hits[lineNo]
		case q.only && q.mode == searchLines:
			for _, m := range q.re.FindAllIndex(line, -1) {
				hit = true
				if m[1] > m[0] {
					parts = append(parts, clipLine(line[m[0]:m[1]]))
				}
			}
		default:
			hit = q.re.Match(line)
		}

		switch {
		case hit && q.mode == searchFiles:
			return out.add(rel, true)
		case hit && q.mode == searchCount:
			count++
		case q.mode != searchLines:
		case hit:
			for _, c := range ring {
				if !out.line(rel, c.n, '-', clipLine(c.text), false) {
					return false
				}
			}
			ring = ring[:0]
			if !q.only {
				parts = []string{clipLine(line)}
			}
			for _, p := range parts {
				if !out.line(rel, lineNo, ':', p, true) {
					return false
				}
			}
			after = q.after
		case after > 0:
			after--
			if !out.line(rel, lineNo, '-', clipLine(line), false) {
				return false
			}
		case q.before > 0:
			if len(ring) == q.before {
				ring = append(ring[:0], ring[1:]...)
			}
			ring = append(ring, numbered{lineNo, line})
		}
	}
	if count > 0 {
		return out.add(fmt.Sprintf("%s:%d", rel, count), true)
	}
	return true
}

// numbered is a line kept for the context before a match.
type numbered struct {
	n    int
	text []byte
}

// multilineHits are the lines a match of re over the whole of data
// touches (ripgrep's -U), each with the parts of the matches on it when
// parts is set (only_matching): a match that spans lines shows a part on
// each. A match that ends with a newline ends on the line the newline
// ends. n counts the matches.
func multilineHits(re *regexp.Regexp, data []byte, parts bool) (hits map[int][]string, n int) {
	hits = map[int][]string{}
	line, pos := 1, 0
	matches := re.FindAllIndex(data, -1)
	for _, m := range matches {
		s, e := m[0], m[1]
		line += bytes.Count(data[pos:s], []byte{'\n'})
		pos = s
		for n, cur := line, s; ; n++ {
			eol := len(data)
			if i := bytes.IndexByte(data[cur:], '\n'); i >= 0 {
				eol = cur + i
			}
			ps := hits[n]
			if piece := data[cur:min(e, eol)]; parts && len(piece) > 0 {
				ps = append(ps, clipLine(piece))
			}
			hits[n] = ps
			if e <= eol+1 {
				break
			}
			cur = eol + 1
		}
	}
	return hits, len(matches)
}

// searchOutput gathers a search's output: entries (lines of output, or
// files) after the first skip, up to limit, the cap (most matches or
// files) and the output budget, and the note that says why it stopped.
type searchOutput struct {
	b     strings.Builder
	skip  int
	limit int
	most  int
	// budget is the most bytes of output, the workspace's MaxOutput.
	budget int
	// grouped: context lines are shown, and groups of lines that are
	// not adjacent are divided by "--", as ripgrep divides them.
	grouped bool
	// numbers: line numbers are shown.
	numbers bool
	// unit names an entry for the notes, what a match, one and many
	// ("line", "lines"; "match", "matches").
	unit, what [2]string
	// seen counts entries, shown or skipped; shown those written;
	// matches the matching lines (or files) written.
	seen, shown, matches int
	// last is the line number of the last line seen of the current
	// file, 0 before its first; any says a line was seen in any file.
	last int
	any  bool
	note string
}

// file starts a new file's lines.
func (o *searchOutput) file() { o.last = 0 }

// line adds one line of a file: a match (sep ':') or context ('-'), and
// the "--" before it when it starts a new group.
func (o *searchOutput) line(rel string, n int, sep byte, s string, match bool) bool {
	if o.grouped && o.any && (o.last == 0 || n > o.last+1) {
		if !o.add("--", false) {
			return false
		}
	}
	o.any, o.last = true, n
	return o.add(o.format(rel, n, sep, s), match)
}

// format is one line as search shows it: path:12: text for a match,
// path-12- text for context, without the number when line_numbers is
// false.
func (o *searchOutput) format(rel string, n int, sep byte, s string) string {
	if !o.numbers {
		return fmt.Sprintf("%s%c %s", rel, sep, s)
	}
	return fmt.Sprintf("%s%c%d%c %s", rel, sep, n, sep, s)
}

// add writes one entry unless it is skipped, or the output is full: then
// it sets the note and reports false.
func (o *searchOutput) add(entry string, match bool) bool {
	o.seen++
	if o.seen <= o.skip {
		return true
	}
	if o.limit > 0 && o.shown == o.limit {
		o.note = fmt.Sprintf("[limit of %s reached; pass skip: %d for the rest]", text.Counted(o.limit, o.unit[0], o.unit[1]), o.skip+o.shown)
		return false
	}
	if match && o.matches == o.most || o.b.Len()+len(entry)+1 > o.budget {
		o.note = fmt.Sprintf("[search stopped after %s; narrow the pattern or path, or pass skip: %d for the rest]",
			text.Counted(o.matches, o.what[0], o.what[1]), o.skip+o.shown)
		return false
	}
	o.b.WriteString(entry)
	o.b.WriteByte('\n')
	o.shown++
	if match {
		o.matches++
	}
	return true
}

// String is the output with its note, if it stopped early.
func (o *searchOutput) String() string {
	if o.shown == 0 && o.note == "" {
		return fmt.Sprintf("[nothing after skip %d: the result has %s]", o.skip, text.Counted(o.seen, o.unit[0], o.unit[1]))
	}
	return strings.TrimSuffix(o.b.String()+o.note, "\n")
}

// readSearchable returns the file's content unless it is too large, binary or
// unreadable; search skips such files silently because they are rarely what
// the model is looking for.
func (t *Toolset) readSearchable(root *workers.RootDir, p string) ([]byte, bool) {
	rel, err := filepath.Rel(t.ws.Root(), p)
	if err != nil {
		return nil, false
	}
	f, err := root.OpenFile(rel)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxSearchFile {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSearchFile+1))
	if err != nil || len(data) > maxSearchFile {
		return nil, false
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return nil, false
	}
	return data, true
}

// clipLine trims a matching line for display, cutting very long lines (such
// as minified code) to maxMatchLineLen runes.
func clipLine(line []byte) string {
	return text.ClipRunes(strings.TrimRight(string(line), "\r"), maxMatchLineLen, " [...]")
}
