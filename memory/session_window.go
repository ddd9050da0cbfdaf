package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A resume sends the model what the conversation is now: after a
// compaction, the system prompt, the summary and the messages the
// compaction kept, then what came after it. Every message before the
// compaction is in messages.jsonl still (the record is only ever
// appended to, and people and handoffs read it whole), but none of it
// reaches the model, so a resume does not decode it (issue 94): the
// record is read, its lines found, and only the lines the conversation
// is made of now are decoded. A long session is compacted as it fills
// its model's window, so what a resume decodes stays about a window's
// worth however long the session grows.

// LoadMessages reads a saved conversation. A torn last line (a crash in the
// middle of an append) is dropped; any other malformed line is an error
// naming the line, because silently skipping history would corrupt replay.
func LoadMessages(fs afero.Fs, dir string) ([]conversation.Message, error) {
	msgs, _, _, err := loadMessages(fs, dir, false)
	return msgs, err
}

// loadMessages is LoadMessages with the number of lines of the record
// and the first hole their seqs show (nil when none does). window reads
// only the lines the conversation is made of now (windowOf): what a
// resume needs. A line it leaves out is not looked at, so damage or a
// hole there, in messages no request carries any more, goes unreported.
func loadMessages(fs afero.Fs, dir string, window bool) ([]conversation.Message, int, *seqHole, error) {
	path := filepath.Join(dir, "messages.jsonl")
	lines, torn, err := readLines(fs, path)
	if err != nil {
		return nil, 0, nil, err
	}
	n := len(lines)
	var l seqLine
	if torn && n > 0 && decodeLine(lines[n-1], &l) != nil {
		// An append writes whole lines, so only the last line can be
		// torn, by a crash; the next append replaces it.
		n--
	}
	if n == 0 {
		return nil, 0, nil, nil
	}
	lines = lines[:n]
	pick := []int(nil)
	if window {
		pick = windowOf(lines)
	}
	if pick == nil {
		pick = make([]int, n)
		for i := range pick {
			pick[i] = i
		}
	}
	msgs := make([]conversation.Message, 0, len(pick))
	var hole *seqHole
	for _, i := range pick {
		if err := decodeLine(lines[i], &l); err != nil {
			return nil, 0, nil, fmt.Errorf("saved conversation %s line %d is malformed: %w", path, i+1, err)
		}
		if hole == nil && l.Seq != 0 && l.Seq != i+1 {
			hole = &seqHole{line: i + 1, seq: l.Seq}
		}
		msgs = append(msgs, l.Message)
	}
	loadImages(fs, dir, msgs)
	return conversation.ApplyMarks(msgs), n, hole, nil
}

// readLines reads the record at path and cuts it into its lines, without
// their newlines; torn says the last one has none. A missing record has
// no lines.
func readLines(fs afero.Fs, path string) (lines [][]byte, torn bool, err error) {
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open saved conversation: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		buf.Grow(int(fi.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(f); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("read saved conversation: %w", err)
	}
	data := buf.Bytes()
	lines = make([][]byte, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(lines, dropCR(data)), true, nil
		}
		lines = append(lines, dropCR(data[:i]))
		data = data[i+1:]
	}
	return lines, false, nil
}

// dropCR drops a line's carriage return, as bufio.ScanLines did.
func dropCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// compactedKey is in every compaction mark's line; a line without it is
// none (a mark whose key is spelt otherwise, which ralph never writes,
// is only missed as a place to start from: it is still read, and
// applied, with the lines after the mark before it).
var compactedKey = []byte(`"compacted":`)

// windowOf is which lines the conversation is made of now, in order: the
// first line (the system prompt), the messages the last compaction kept
// before its mark, and every line from the mark on. It is nil, all of
// them, when the record has no compaction, or when the window is not
// certain to give what reading every line gives: a system message after
// the first line outside the window, another compaction among the kept
// messages, a line there that does not decode.
func windowOf(lines [][]byte) []int {
	mark := -1
	var m seqLine
	for i := len(lines) - 1; i > 0 && mark < 0; i-- {
		if bytes.Contains(lines[i], compactedKey) && decodeLine(lines[i], &m) == nil && m.Compacted != nil {
			mark = i
		}
	}
	if mark < 0 {
		return nil
	}
	// The kept messages are the last Kept before the mark, refusal
	// marks (which mark the messages before them) not counted.
	start, kept := mark, max(m.Compacted.Kept, 0)
	var l seqLine
	for n := 0; n < kept; {
		start--
		if start < 1 || decodeLine(lines[start], &l) != nil || l.Compacted != nil {
			return nil
		}
		if !l.IsRefusalMark() {
			n++
		}
	}
	// A compaction keeps the system messages before it. ralph writes one,
	// first; a line that may be another (its text says "system", or it
	// holds an escape that might spell it) is looked at.
	for i := 1; i < start; i++ {
		if bytes.Contains(lines[i], []byte("system")) || bytes.Contains(lines[i], []byte(`\u`)) {
			if decodeLine(lines[i], &l) != nil || l.Role == conversation.RoleSystem {
				return nil
			}
		}
	}
	pick := make([]int, 0, 1+len(lines)-start)
	pick = append(pick, 0)
	for i := start; i < len(lines); i++ {
		pick = append(pick, i)
	}
	return pick
}
