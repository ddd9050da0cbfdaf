// Package applypatch reads the patch format of OpenAI's codex (its apply_patch
// tool, the format GPT-5 and the codex models are trained to write) and
// computes an updated file's new content. It is pure: text in, operations
// and text out; the files are read and written by the apply_patch tool
// through the project's door (workers/tools/apply_patch.go).
//
// A patch is
//
//	*** Begin Patch
//	*** Add File: path        followed by its lines, each starting with +
//	*** Delete File: path
//	*** Update File: path     optionally followed by *** Move to: path, then
//	                          chunks: an @@ line (bare, or @@ followed by a line
//	                          to find first), lines starting with ' ', '-'
//	                          or '+', and optionally *** End of File
//	*** End Patch
//
// and it is read as leniently as codex reads it: markers may be padded with
// whitespace, a heredoc wrapper (<<'EOF' … EOF) is taken off, the first
// chunk of an update may omit its @@ line, and lines are found exactly,
// then ignoring trailing whitespace, then ignoring surrounding whitespace,
// then with Unicode dashes, quotes and spaces read as their ASCII
// counterparts. An "@@ -12,7 +12,8 @@" header is a line to find, as in
// codex, not a unified-diff range.
package applypatch

import (
	"fmt"
	"strings"
	"unicode"
)

const (
	beginMarker   = "*** Begin Patch"
	endMarker     = "*** End Patch"
	addMarker     = "*** Add File: "
	deleteMarker  = "*** Delete File: "
	updateMarker  = "*** Update File: "
	moveMarker    = "*** Move to: "
	eofMarker     = "*** End of File"
	contextMarker = "@@ "
	emptyContext  = "@@"
)

// Kind is what a hunk does to its file.
type Kind int

const (
	// Add writes a file with Contents, replacing one that exists.
	Add Kind = iota
	// Delete removes a file.
	Delete
	// Update changes a file by its Chunks, and moves it to MoveTo when set.
	Update
)

// Hunk is one file's operation.
type Hunk struct {
	Kind     Kind
	Path     string
	Contents string // Add: the whole new file
	MoveTo   string // Update: the new name, "" to keep it
	Chunks   []Chunk
}

// Chunk is one change of an update: Old replaced by New, found after
// Context (a line to find first) when Context is set, and at the file's
// end when EOF.
type Chunk struct {
	Context    string
	HasContext bool
	Old, New   []string
	EOF        bool
}

// Error is a patch that cannot be read.
type Error struct {
	Line int // the line the problem is at, 0 for the patch as a whole
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "invalid patch: " + e.Msg
	}
	return fmt.Sprintf("invalid hunk at line %d, %s", e.Line, e.Msg)
}

// Parse reads a patch into its hunks, in order. A patch with no hunk
// parses; applying it is refused ("No files were modified").
func Parse(text string) ([]Hunk, error) {
	lines := splitLines(strings.TrimSpace(text))
	body, err := boundaries(lines)
	if err != nil {
		return nil, err
	}
	var hunks []Hunk
	line := 2
	for len(body) > 0 {
		h, n, err := parseHunk(body, line)
		if err != nil {
			return nil, err
		}
		hunks = append(hunks, h)
		line += n
		body = body[n:]
	}
	return hunks, nil
}

// splitLines splits as Rust's str::lines does: on \n, each line without
// a trailing \r, no empty last line after a final newline.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	out := strings.Split(s, "\n")
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

// boundaries checks the Begin and End markers, or the same inside a
// heredoc wrapper, and returns the lines between them.
func boundaries(lines []string) ([]string, error) {
	body, err := strictBoundaries(lines)
	if err == nil {
		return body, nil
	}
	if len(lines) >= 4 {
		first, last := lines[0], lines[len(lines)-1]
		if (first == "<<EOF" || first == "<<'EOF'" || first == `<<"EOF"`) && strings.HasSuffix(last, "EOF") {
			return strictBoundaries(lines[1 : len(lines)-1])
		}
	}
	return nil, err
}

func strictBoundaries(lines []string) ([]string, error) {
	var first, last string
	if len(lines) > 0 {
		first, last = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[len(lines)-1])
	}
	switch {
	case len(lines) > 0 && first == beginMarker && last == endMarker:
		return lines[1 : len(lines)-1], nil
	case len(lines) > 0 && first != beginMarker:
		return nil, &Error{Msg: "The first line of the patch must be '*** Begin Patch'"}
	}
	return nil, &Error{Msg: "The last line of the patch must be '*** End Patch'"}
}

// parseHunk reads one hunk at the start of lines (line is the first's
// number in the patch) and returns it with the number of lines it took.
func parseHunk(lines []string, line int) (Hunk, int, error) {
	first := strings.TrimSpace(lines[0])
	if path, ok := strings.CutPrefix(first, addMarker); ok {
		var b strings.Builder
		n := 1
		for _, l := range lines[1:] {
			rest, ok := strings.CutPrefix(l, "+")
			if !ok {
				break
			}
			b.WriteString(rest)
			b.WriteByte('\n')
			n++
		}
		return Hunk{Kind: Add, Path: path, Contents: b.String()}, n, nil
	}
	if path, ok := strings.CutPrefix(first, deleteMarker); ok {
		return Hunk{Kind: Delete, Path: path}, 1, nil
	}
	if path, ok := strings.CutPrefix(first, updateMarker); ok {
		h := Hunk{Kind: Update, Path: path}
		rest, n := lines[1:], 1
		if len(rest) > 0 {
			if to, ok := strings.CutPrefix(rest[0], moveMarker); ok {
				h.MoveTo = to
				rest, n = rest[1:], n+1
			}
		}
		for len(rest) > 0 {
			if strings.TrimSpace(rest[0]) == "" {
				rest, n = rest[1:], n+1
				continue
			}
			if strings.HasPrefix(rest[0], "*") {
				break
			}
			c, m, err := parseChunk(rest, line+n, len(h.Chunks) == 0)
			if err != nil {
				return Hunk{}, 0, err
			}
			h.Chunks = append(h.Chunks, c)
			rest, n = rest[m:], n+m
		}
		if len(h.Chunks) == 0 {
			return Hunk{}, 0, &Error{Line: line, Msg: fmt.Sprintf("Update file hunk for path '%s' is empty", path)}
		}
		return h, n, nil
	}
	return Hunk{}, 0, &Error{Line: line, Msg: fmt.Sprintf("'%s' is not a valid hunk header. "+
		"Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", first)}
}

// parseChunk reads one chunk of an update; the first may omit its @@.
func parseChunk(lines []string, line int, allowMissingContext bool) (Chunk, int, error) {
	var c Chunk
	start := 0
	switch {
	case lines[0] == emptyContext:
		start = 1
	case strings.HasPrefix(lines[0], contextMarker):
		c.Context, c.HasContext, start = lines[0][len(contextMarker):], true, 1
	case !allowMissingContext:
		return Chunk{}, 0, &Error{Line: line, Msg: fmt.Sprintf("Expected update hunk to start with a @@ context marker, got: '%s'", lines[0])}
	}
	if start >= len(lines) {
		return Chunk{}, 0, &Error{Line: line + 1, Msg: "Update hunk does not contain any lines"}
	}
	n := 0
	for _, l := range lines[start:] {
		if l == eofMarker {
			if n == 0 {
				return Chunk{}, 0, &Error{Line: line + 1, Msg: "Update hunk does not contain any lines"}
			}
			c.EOF = true
			n++
			break
		}
		if l == "" {
			c.Old = append(c.Old, "")
			c.New = append(c.New, "")
			n++
			continue
		}
		switch l[0] {
		case ' ':
			c.Old = append(c.Old, l[1:])
			c.New = append(c.New, l[1:])
		case '+':
			c.New = append(c.New, l[1:])
		case '-':
			c.Old = append(c.Old, l[1:])
		default:
			if n == 0 {
				return Chunk{}, 0, &Error{Line: line + 1, Msg: fmt.Sprintf("Unexpected line found in update hunk: '%s'. "+
					"Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l)}
			}
			return c, n + start, nil
		}
		n++
	}
	return c, n + start, nil
}

// Updated is a file's content after an update's chunks, or an error that
// names path when a chunk's lines are not found. The result always ends
// in a newline, as codex's does.
func Updated(path, original string, chunks []Chunk) (string, error) {
	lines := strings.Split(original, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type replacement struct {
		start, n int
		lines    []string
	}
	var reps []replacement
	at := 0
	for _, c := range chunks {
		if c.HasContext {
			i, ok := seek(lines, []string{c.Context}, at, false)
			if !ok {
				return "", fmt.Errorf("Failed to find context '%s' in %s", c.Context, path)
			}
			at = i + 1
		}
		if len(c.Old) == 0 {
			// A pure addition goes at the end (before a final empty line).
			i := len(lines)
			if i > 0 && lines[i-1] == "" {
				i--
			}
			reps = append(reps, replacement{i, 0, c.New})
			continue
		}
		old, repl := c.Old, c.New
		i, ok := seek(lines, old, at, c.EOF)
		if !ok && old[len(old)-1] == "" {
			// The last empty line stands for the final newline.
			old = old[:len(old)-1]
			if len(repl) > 0 && repl[len(repl)-1] == "" {
				repl = repl[:len(repl)-1]
			}
			i, ok = seek(lines, old, at, c.EOF)
		}
		if !ok {
			return "", fmt.Errorf("Failed to find expected lines in %s:\n%s", path, strings.Join(c.Old, "\n"))
		}
		reps = append(reps, replacement{i, len(old), repl})
		at = i + len(old)
	}
	// Stable by start, applied from the last so earlier indexes hold.
	for i := 1; i < len(reps); i++ {
		for j := i; j > 0 && reps[j].start < reps[j-1].start; j-- {
			reps[j], reps[j-1] = reps[j-1], reps[j]
		}
	}
	for k := len(reps) - 1; k >= 0; k-- {
		r := reps[k]
		end := min(r.start+r.n, len(lines))
		start := min(r.start, len(lines))
		next := make([]string, 0, len(lines)-(end-start)+len(r.lines))
		next = append(next, lines[:start]...)
		next = append(next, r.lines...)
		next = append(next, lines[end:]...)
		lines = next
	}
	if len(lines) == 0 || lines[len(lines)-1] != "" {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n"), nil
}

// seek finds pattern in lines at or after start (at the end only, when
// eof), exactly, then ignoring trailing whitespace, then surrounding
// whitespace, then with typographic punctuation read as ASCII.
func seek(lines, pattern []string, start int, eof bool) (int, bool) {
	if len(pattern) == 0 {
		return start, true
	}
	if len(pattern) > len(lines) {
		return 0, false
	}
	from := start
	if eof {
		from = len(lines) - len(pattern)
	}
	last := len(lines) - len(pattern)
	for _, same := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return trimRight(a) == trimRight(b) },
		func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
		func(a, b string) bool { return normalise(a) == normalise(b) },
	} {
	next:
		for i := from; i <= last; i++ {
			for j, p := range pattern {
				if !same(lines[i+j], p) {
					continue next
				}
			}
			return i, true
		}
	}
	return 0, false
}

func trimRight(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// normalise trims s and reads typographic dashes, quotes and spaces as
// their ASCII counterparts.
func normalise(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}

// Paths are the files a patch names, each once, in order: every hunk's
// path and move destination. A patch that does not parse names none.
func Paths(text string) []string {
	hunks, err := Parse(text)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range hunks {
		for _, p := range []string{h.Path, h.MoveTo} {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
