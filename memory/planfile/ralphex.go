package planfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A ralphex plan (umputun/ralphex) is markdown with one section per task,
// "### Task N: title", whose checkboxes are the task's steps, and a
// "## Validation Commands" list. ralph reads each section as one task
// (task-N, after the task before it, as ralphex runs them in order), its
// steps as the task's notes, and the validation commands as the plan's
// verify; a task is done when every step is checked, and ralph checks
// them all when it finishes the task, as ralphex does. Every other byte
// of the file is kept.

var (
	ralphexTask     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^###\s+Task\s+(\d+)\s*[:.]\s*(.+?)\s*$`) })
	ralphexHeading  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#{1,3}\s`) })
	ralphexStep     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*[-*+]\s+\[)([ xX])(\]\s*)(.*)$`) })
	ralphexValidate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^#{2,3}\s+validation commands\s*$`) })
	ralphexListItem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+]\s+(?:\[[ xX]\]\s+)?(.+)$`) })
)

// isRalphexPlan reports whether a markdown file is shaped as a ralphex
// plan: it has a "### Task N: title" section.
func isRalphexPlan(data []byte) bool {
	ok, _ := readsAsRalphex(bytes.NewReader(data), int64(len(data)))
	return ok
}

// readsAsRalphex is isRalphexPlan of a file read as a stream: the plan
// is told apart at every run and every status, and the task list it
// most often looks at may be 16 MB, which read whole and split into
// lines was twice that again of garbage per look. Only a line that
// starts as a heading of the third level is kept whole to be matched.
// size is what the file's stat said, so that a small file gets a buffer
// its size rather than the largest.
func readsAsRalphex(r io.Reader, size int64) (bool, error) {
	br := bufio.NewReaderSize(r, int(min(max(size+1, 512), 64<<10)))
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !bytes.HasPrefix(line, []byte("###")) {
				if err = skipLine(br); err != nil {
					return false, ignoreEOF(err)
				}
				continue
			}
			// A heading longer than the buffer: the rest of it, which
			// the caller's reader bounds, is read whole to be matched.
			whole := bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				whole = append(whole, line...)
			}
			line = whole
		}
		if bytes.HasPrefix(line, []byte("###")) && ralphexTask().Match(bytes.TrimRight(line, "\r\n")) {
			return true, nil
		}
		if err != nil {
			return false, ignoreEOF(err)
		}
	}
}

// skipLine reads past the end of the line br is in.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// ralphexSource is a ralphex plan file.
type ralphexSource struct {
	fs   afero.Fs
	path string
}

// ralphexSection is one task section: its heading's line and the lines
// of its steps.
type ralphexSection struct {
	task  sourceTask
	steps []int
}

func parseRalphex(data []byte) []ralphexSection {
	lines := strings.Split(string(data), "\n")
	var out []ralphexSection
	cur := -1
	var notes []string
	flush := func() {
		if cur >= 0 {
			out[cur].task.Notes = strings.TrimSpace(strings.Join(notes, "\n"))
		}
		notes = nil
	}
	for i, raw := range lines {
		l := strings.TrimRight(raw, "\r")
		if m := ralphexTask().FindStringSubmatch(l); m != nil {
			flush()
			id := "task-" + m[1]
			t := sourceTask{ID: id, Title: m[2]}
			if cur >= 0 {
				t.Depends = []string{out[cur].task.ID}
			}
			out = append(out, ralphexSection{task: t})
			cur = len(out) - 1
			continue
		}
		if ralphexHeading().MatchString(l) {
			flush()
			cur = -1
			continue
		}
		if cur < 0 {
			continue
		}
		if m := ralphexStep().FindStringSubmatch(l); m != nil {
			out[cur].steps = append(out[cur].steps, i)
			step := "- " + m[4]
			if m[2] != " " {
				step += " (done)"
			}
			notes = append(notes, step)
			continue
		}
		notes = append(notes, l)
	}
	flush()
	for i := range out {
		s := &out[i]
		s.task.Done = len(s.steps) > 0
		for _, at := range s.steps {
			if m := ralphexStep().FindStringSubmatch(strings.TrimRight(lines[at], "\r")); m == nil || m[2] == " " {
				s.task.Done = false
			}
		}
	}
	return out
}

func (r *ralphexSource) read() ([]sourceTask, error) {
	data, err := rootfs.ReadSmall(r.fs, r.path, memory.MaxStateFile)
	if errors.As(err, new(*rootfs.TooLargeError)) {
		return nil, err
	}
	if err != nil {
		return nil, planErrorf("cannot read the plan: %v", err)
	}
	var out []sourceTask
	for _, s := range parseRalphex(data) {
		out = append(out, s.task)
	}
	return out, nil
}

// markDone checks (or unchecks) every step of the tasks named.
func (r *ralphexSource) markDone(done map[string]bool) error {
	data, perm, err := readTasks(r.fs, r.path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	for _, s := range parseRalphex(data) {
		d, ok := done[s.task.ID]
		if !ok {
			continue
		}
		box := " "
		if d {
			box = "x"
		}
		for _, at := range s.steps {
			cr := strings.HasSuffix(lines[at], "\r")
			m := ralphexStep().FindStringSubmatch(strings.TrimRight(lines[at], "\r"))
			if m == nil || (m[2] != " ") == d {
				continue
			}
			lines[at] = m[1] + box + m[3] + m[4]
			if cr {
				lines[at] += "\r"
			}
		}
	}
	return memory.WriteFileAtomic(r.fs, r.path, []byte(strings.Join(lines, "\n")), perm)
}

// verify is the plan's validation commands, joined with &&: a command
// in backticks is taken from them ("`go test ./...` - run the tests").
func (r *ralphexSource) verify(data []byte) string {
	var cmds []string
	in := false
	for _, raw := range strings.Split(string(data), "\n") {
		l := strings.TrimRight(raw, "\r")
		if ralphexHeading().MatchString(l) {
			in = ralphexValidate().MatchString(l)
			continue
		}
		if !in {
			continue
		}
		m := ralphexListItem().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		item := strings.TrimSpace(m[1])
		if strings.HasPrefix(item, "`") {
			if end := strings.Index(item[1:], "`"); end > 0 {
				item = item[1 : end+1]
			}
		}
		if item != "" {
			cmds = append(cmds, item)
		}
	}
	return strings.Join(cmds, " && ")
}
