package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The markdown state files in the project root. They are the part of
// ralph's memory a person reads and edits, so every write below keeps the
// person's bytes intact.
//
// AgentFile, AGENT.md, is ralph's own: what `ralph init` detected of the
// project and the learnings ralph's remember tool adds, apart from the
// person's instructions. InstructionsFile, AGENTS.md, is the person's
// instructions file, which every coding agent reads first (codex, Cursor,
// ralph; Claude Code reads CLAUDE.md): their colleagues and their other
// tools read it too, so ralph writes it only where the person has no
// instructions file at all (ralph init's starter) or asks (chat's /init).
// Learnings went to AGENTS.md for a while; they belong in AGENT.md (issue
// 92).
const (
	InstructionsFile = "AGENTS.md"
	AgentFile        = "AGENT.md"
	GoalsFile        = "RALPH_GOALS.md"
	// TasksFile is the task list in the project root (its parser is
	// memory/planfile) and ProgressFile the task loop's log of tasks
	// done. Both names are written nowhere else outside tests
	// (statefiles_literal_test.go), and both stay here because a
	// session's state files name them while memory imports no plan
	// format.
	TasksFile    = "RALPH_TASKS.md"
	ProgressFile = "RALPH_PROGRESS.md"
	TodoFile     = "RALPH_TODO.md"
)

// InstructionFiles are the person's instructions files, which ralph
// reads as the project's instructions (coordinator/project) and never
// writes unasked: a project with one of them gets no AGENTS.md from
// ralph init.
var InstructionFiles = []string{InstructionsFile, "CLAUDE.md"}

// LoopFiles are the files the task loop keeps for itself, the task list
// and its progress log. The loop is their one writer, so a task's commit
// or checkpoint leaves them out, on both of its hosts (coordinator/taskgit,
// ralph-temporal's workers).
func LoopFiles() []string { return []string{TasksFile, ProgressFile} }

// MaxStateFile is the most ralph reads of a markdown state file it reads
// whole (RALPH_TASKS.md and any other plan, AGENT.md): a 10,000-task list
// is about 1 MB, so 16 MB is far beyond any real one, and one larger is a
// mistake ralph refuses in one sentence (a *rootfs.TooLargeError) rather
// than parse for minutes in gigabytes.
const MaxStateFile = 16 << 20

// MaxSessionFile is the most ralph reads of a JSON record it keeps whole
// (session.json, links.json, a plan's sidecar): each is a few kilobytes.
const MaxSessionFile = 1 << 20

// maxLearning bounds one remembered note so a runaway tool call cannot
// flood AGENT.md, which is part of every prompt.
const maxLearning = 500

// readMarkdown reads a whole state file, up to MaxStateFile; a missing
// file reads as empty with the default mode, because every caller then
// creates it.
func readMarkdown(fs afero.Fs, path string) (string, os.FileMode, error) {
	perm := os.FileMode(0o644)
	if fi, err := fs.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	b, err := rootfs.ReadSmall(fs, path, MaxStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", perm, nil
	}
	if err != nil {
		return "", perm, fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), perm, nil
}

// eolOf returns the line ending a file mostly uses, so lines ralph adds to
// a file edited on Windows do not leave it with mixed endings.
func eolOf(s string) string {
	if crlf := strings.Count(s, "\r\n"); crlf > 0 && 2*crlf > strings.Count(s, "\n") {
		return "\r\n"
	}
	return "\n"
}

// StateDoc is one markdown state file as loaded for the model's context.
type StateDoc struct {
	Name      string
	Content   string
	Truncated bool
}

// entryHeading finds a progress entry boundary in the bytes before it
// ("\n## 2026-..."); anyHeading is the fallback for hand-written entries.
var (
	entryHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n## \d{4}-\d{2}-\d{2}`) })
	anyHeading   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n## `) })
)

// LoadStateDocs reads the state files that exist, in prompt order. Each is
// capped at maxEach bytes keeping its head, except RALPH_PROGRESS.md, of
// which only the last maxProgress bytes are kept, starting at an entry
// heading, because recent progress is what matters. A non-positive cap
// means no limit. Missing files are skipped: a project need not have all.
// They are read through the session's door (memory/kept), since they go
// into the system prompt.
func LoadStateDocs(door *kept.Door, fs afero.Fs, root string, maxEach, maxProgress int) ([]StateDoc, error) {
	var docs []StateDoc
	for _, name := range []string{AgentFile, GoalsFile, TasksFile, TodoFile, ProgressFile} {
		limit := maxEach
		if name == ProgressFile {
			limit = maxProgress
		}
		doc, ok, err := loadDoc(door, fs, filepath.Join(root, name), limit, name == ProgressFile)
		if errors.Is(err, rootfs.ErrNotRegular) {
			// A FIFO (say) a command put there holds no state: it is
			// left out, as a link out of the project is, and the others
			// still reach the prompt.
			continue
		}
		if err != nil {
			return docs, err
		}
		if ok {
			doc.Name = name
			docs = append(docs, doc)
		}
	}
	return docs, nil
}

// loadDoc reads one state file: through door when it is for a request
// (LoadStateDocs), as it is for ralph's own use (nil: the progress log's
// recovery and rotation, which send nothing).
func loadDoc(door *kept.Door, fs afero.Fs, path string, limit int, tail bool) (StateDoc, bool, error) {
	var f afero.File
	var fi os.FileInfo
	var err error
	if door != nil {
		f, fi, _, err = door.OpenSmall(fs, path)
	} else {
		f, fi, err = rootfs.OpenSmall(fs, path)
	}
	// A state file that is a link out of the project (a command may have
	// linked it to a key) is left out as if missing: the project's door
	// refuses to follow it; so is one the session's door refuses (a link
	// to a key inside a home granted as the project, to a file a Read
	// deny rule names).
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, rootfs.ErrLinkOut) || kept.IsRefusal(err) {
		return StateDoc{}, false, nil
	}
	if err != nil {
		return StateDoc{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var b []byte
	if tail && limit > 0 {
		if size := fi.Size(); size > int64(limit) {
			// One byte more than the limit shows whether the tail starts at
			// a line start, where an entry heading may begin.
			b = make([]byte, limit+1)
			if _, err := f.ReadAt(b, size-int64(limit)-1); err != nil && !errors.Is(err, io.EOF) {
				return StateDoc{}, false, fmt.Errorf("read %s: %w", path, err)
			}
			return StateDoc{Content: cutTail(b), Truncated: true}, true, nil
		}
		limit = 0
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, int64(limit)+1)
	}
	if b, err = io.ReadAll(r); err != nil {
		return StateDoc{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	if limit > 0 && len(b) > limit {
		return StateDoc{Content: cutHead(b, limit), Truncated: true}, true, nil
	}
	return StateDoc{Content: string(b)}, true, nil
}

// cutHead keeps at most limit bytes, ending at a line end when one is in
// the second half so the model does not see a half line, and never
// splitting a UTF-8 character.
func cutHead(b []byte, limit int) string {
	s := string(b)
	if i := strings.LastIndexByte(s[:limit], '\n'); i >= limit/2 {
		return s[:i+1]
	}
	return text.Head(s, limit)
}

// cutTail drops the partial entry at the start of a progress tail whose
// first byte is the one before the tail proper.
func cutTail(b []byte) string {
	for _, re := range []*regexp.Regexp{entryHeading(), anyHeading()} {
		if loc := re.FindIndex(b); loc != nil {
			return string(b[loc[0]+1:])
		}
	}
	// One entry longer than the whole budget: show its last whole lines.
	if i := strings.IndexByte(string(b), '\n'); i >= 0 {
		return string(b[i+1:])
	}
	n := 1
	for n < len(b) && !utf8.RuneStart(b[n]) {
		n++
	}
	return string(b[n:])
}

// ContextBlock formats docs for the system prompt. Each file sits in a
// fence longer than any backtick run inside it, so the model sees the
// file's exact bytes even when the file itself contains code blocks.
func ContextBlock(docs []StateDoc) string {
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n", d.Name)
		if d.Name == AgentFile {
			// Apart from the instructions that follow: what ralph itself
			// learned, which remember adds to.
			b.WriteString("(ralph's own learnings about this project; the remember tool adds to them.)\n\n")
		}
		if d.Truncated && d.Name == ProgressFile {
			b.WriteString("(Only the most recent entries are shown; older ones are earlier in the file.)\n\n")
		} else if d.Truncated {
			b.WriteString("(Truncated: only the beginning is shown; read the file for the rest.)\n\n")
		}
		fence := strings.Repeat("`", max(3, longestRun(d.Content, '`')+1))
		b.WriteString(fence + "markdown\n" + d.Content)
		if d.Content != "" && !strings.HasSuffix(d.Content, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(fence + "\n")
	}
	return b.String()
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// learningMu serializes this process's AppendLearning calls: parallel tool
// calls would otherwise read the same AGENT.md and lose each other's line.
var learningMu sync.Mutex

var lineBreaks = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*[\r\n]\s*`) })

// lstat is Lstat where the file system has it, else Stat.
func lstat(fs afero.Fs, path string) (os.FileInfo, error) {
	if l, ok := fs.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(path)
		return fi, err
	}
	return fs.Stat(path)
}

// AppendLearning adds "- <note> (YYYY-MM-DD)" at the end of AGENT.md's
// Learnings section, creating the file or section if missing and keeping
// every other byte of the file, since a person edits it too. It never
// writes the person's instructions file (AGENTS.md, CLAUDE.md): their
// colleagues and other tools read that, and a learning is ralph's.
func AppendLearning(fs afero.Fs, root, note string, now time.Time) error {
	note = strings.TrimSpace(lineBreaks().ReplaceAllString(note, " "))
	if note == "" {
		return errors.New("remember: the note is empty")
	}
	if utf8.RuneCountInString(note) > maxLearning {
		note = text.ClipRunes(note, maxLearning-1, text.Ellipsis)
	}
	item := "- " + note + " (" + now.UTC().Format(time.DateOnly) + ")"
	path := filepath.Join(root, AgentFile)
	learningMu.Lock()
	defer learningMu.Unlock()
	for attempt := 0; ; attempt++ {
		old, perm, err := readMarkdown(fs, path)
		if err != nil {
			return err
		}
		updated := insertLearning(old, item)
		// Re-read right before the write: if a person saved the file in
		// the meantime, redo the insert on their version, not over it.
		again, _, err := readMarkdown(fs, path)
		if err != nil {
			return err
		}
		if again == old || attempt == 3 {
			if again != old {
				updated = insertLearning(again, item)
			}
			return WriteFileAtomic(fs, path, []byte(updated), perm)
		}
	}
}

// insertLearning returns s with item inserted after the last non-blank line
// of the "## Learnings" section, ignoring headings inside code fences.
func insertLearning(s, item string) string {
	if s == "" {
		return agentHeader + "\n## Learnings\n\n" + item + "\n"
	}
	eol := eolOf(s)
	headingEnd, insertAt, fence := -1, -1, ""
	off := 0
	for line := range strings.Lines(s) {
		off += len(line)
		text := strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(text, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		} else if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
		}
		level := headingLevel(text)
		if fence == "" && level > 0 && level <= 2 {
			if headingEnd >= 0 {
				break // the next section starts here
			}
			if level == 2 && strings.EqualFold(strings.TrimSpace(strings.Trim(text, "#")), "Learnings") {
				headingEnd, insertAt = off, off
			}
			continue
		}
		if headingEnd >= 0 && strings.TrimSpace(text) != "" {
			insertAt = off
		}
	}
	if headingEnd < 0 {
		t := s
		if !strings.HasSuffix(t, "\n") {
			t += eol
		}
		if !strings.HasSuffix(t, "\n\n") && !strings.HasSuffix(t, "\n\r\n") {
			t += eol
		}
		return t + "## Learnings" + eol + eol + item + eol
	}
	add := item + eol
	if insertAt == headingEnd {
		add = eol + add // a blank line between the heading and the first item
	}
	if !strings.HasSuffix(s[:insertAt], "\n") {
		add = eol + add // the section's last line ended the file without a newline
	}
	return s[:insertAt] + add + s[insertAt:]
}

// headingLevel returns the ATX heading level of a line, or 0.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || (len(line) > n && line[n] != ' ' && line[n] != '\t') {
		return 0
	}
	return n
}

// ProgressEntry is one dated entry in RALPH_PROGRESS.md.
type ProgressEntry struct {
	Time      time.Time // zero means now
	Title     string
	Body      string
	SessionID string
	Iteration int
	// TaskID and Attempt make the entry a task's completion record
	// (CompleteTask): it ends in the mark <!-- ralph:progress task=ID
	// attempt=N session=S -->, it is written once per task and attempt
	// whichever session writes it, and recovery reads it back
	// (RecoverInProgress). TaskID must be the task's own id, not a line.
	TaskID  string
	Attempt int
}

// AppendProgress appends an entry to RALPH_PROGRESS.md, creating it with
// its heading if missing. It appends and syncs, so a crash or a person
// editing older entries can never lose what was already there; once the
// file is past ProgressRotateAt, its older entries then move to
// .ralph/progress/ (rotateProgress). An entry of a task's attempt whose
// mark is among the file's newest entries (progressTail) is not written
// again. A write that fails leaves no part of the entry behind, as far as
// the file system lets it be cut off.
func AppendProgress(fs afero.Fs, root string, e ProgressEntry) error {
	progressMu.Lock()
	defer progressMu.Unlock()
	if err := appendProgress(fs, root, e); err != nil {
		return err
	}
	// The entry is written and synced: a rotation that fails loses
	// nothing and is tried again at the next entry.
	_ = rotateProgress(fs, root)
	return nil
}

func appendProgress(fs afero.Fs, root string, e ProgressEntry) error {
	path := filepath.Join(root, ProgressFile)
	mark := ""
	if e.TaskID != "" {
		mark = progressMark(e.TaskID, e.Attempt, e.SessionID)
		doc, _, err := loadDoc(nil, fs, path, progressTail, true)
		if err != nil {
			return err
		}
		if HasProgressMark(doc.Content, e.TaskID, e.Attempt) {
			return nil
		}
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	title := unmark(strings.TrimSpace(lineBreaks().ReplaceAllString(e.Title, " ")))
	if title == "" {
		title = fmt.Sprintf("Iteration %d", e.Iteration)
	}
	entry := "\n## " + e.Time.UTC().Format("2006-01-02 15:04 UTC") + " — " + title + "\n\n"
	if body := strings.Trim(e.Body, "\r\n"); strings.TrimSpace(body) != "" {
		entry += unmark(body) + "\n\n"
	}
	var who []string
	if e.SessionID != "" {
		who = append(who, "session "+e.SessionID)
	}
	if e.Iteration > 0 {
		who = append(who, fmt.Sprintf("iteration %d", e.Iteration))
	}
	if len(who) > 0 {
		entry += "_" + strings.Join(who, ", ") + "_"
		if mark != "" {
			entry += " " + mark
		}
		entry += "\n"
	} else if mark != "" {
		entry += mark + "\n"
	}
	if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) {
		created, err := createExclusive(fs, path, []byte(progressTemplate+entry))
		if created || err != nil {
			return err
		}
	}
	return AppendFile(fs, path, []byte(entry), true)
}

// RecentProgress is the end of RALPH_PROGRESS.md, at most max bytes,
// starting at an entry heading: what a task's agent reads of the work
// done before it, through the session's door. The file's preamble is
// left out; it is "" when the file does not exist or has no entry yet.
func RecentProgress(door *kept.Door, fs afero.Fs, root string, max int) (string, error) {
	doc, _, err := loadDoc(door, fs, filepath.Join(root, ProgressFile), max, true)
	s := doc.Content
	if !strings.HasPrefix(s, "## ") {
		i := strings.Index(s, "\n## ")
		if i < 0 {
			return "", err
		}
		s = s[i+1:]
	}
	return s, err
}

// Goals is RALPH_GOALS.md, its head when longer than max bytes, read
// through the session's door for the prompt it goes into; "" when the
// file does not exist.
func Goals(door *kept.Door, fs afero.Fs, root string, max int) (string, error) {
	doc, _, err := loadDoc(door, fs, filepath.Join(root, GoalsFile), max, false)
	return doc.Content, err
}
