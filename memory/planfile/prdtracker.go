package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// prdSource is a ralph-tui prd.json worked in place: its user stories are
// the tasks (the story's id, sanitised as ralph import makes it), and a
// task done sets the story's "passes" to true, as ralph-tui does, in the
// file's own bytes: every other byte, the person's formatting included,
// stays as it was.
type prdSource struct {
	fs   afero.Fs
	path string
}

func (p *prdSource) read() ([]sourceTask, error) {
	data, err := rootfs.ReadSmall(p.fs, p.path, memory.MaxStateFile)
	if errors.As(err, new(*rootfs.TooLargeError)) {
		return nil, err
	}
	if err != nil {
		return nil, planErrorf("cannot read the plan: %v", err)
	}
	doc, err := parsePRD(data)
	if err != nil {
		return nil, planErrorf("%v", err)
	}
	var out []sourceTask
	for i, s := range *doc.UserStories {
		t := sourceTask{ID: prdTaskID(s.id, i), Title: s.Title, Done: s.Passes}
		if strings.TrimSpace(t.Title) == "" {
			t.Title = t.ID
		}
		t.Notes = strings.Join(storyBody(s.Description, s.AcceptanceCriteria, s.Notes), "\n")
		if pr, ok := prdPriority(s.Priority); ok {
			t.Priority = &pr
		}
		for _, d := range s.deps {
			if id := sanitizeTaskID(d); id != "" && id != t.ID {
				t.Depends = append(t.Depends, id)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// prdTaskID is a story's task id: its id made a word, or story-N.
func prdTaskID(id string, i int) string {
	if s := sanitizeTaskID(strings.TrimSpace(id)); s != "" {
		return s
	}
	return "story-" + strconv.Itoa(i+1)
}

// markDone sets "passes" of the stories named, editing only the value's
// bytes (or adding the key to a story that lacks it).
func (p *prdSource) markDone(done map[string]bool) error {
	data, perm, err := readTasks(p.fs, p.path)
	if err != nil {
		return err
	}
	doc, err := parsePRD(data)
	if err != nil {
		return planErrorf("%v", err)
	}
	spans, err := passesSpans(data)
	if err != nil {
		return planErrorf("%v", err)
	}
	// Edits from the end, so earlier offsets stay right.
	for i := len(*doc.UserStories) - 1; i >= 0; i-- {
		s := (*doc.UserStories)[i]
		d, ok := done[prdTaskID(s.id, i)]
		if !ok || i >= len(spans) {
			continue
		}
		sp := spans[i]
		if sp.from < 0 && sp.to <= 0 {
			continue // not an object with keys: nothing to mark
		}
		val := strconv.FormatBool(d)
		if sp.from >= 0 {
			data = replaceAt(data, sp.from, sp.to, val)
		} else {
			data = replaceAt(data, sp.to, sp.to, `, "passes": `+val)
		}
	}
	return memory.WriteFileAtomic(p.fs, p.path, data, perm)
}

// passesSpan is where a story's "passes" value lies: [from, to), or, for a
// story without one, from -1 and to where a new key may be added (after
// its last value).
type passesSpan struct{ from, to int }

// passesSpans walks the JSON tokens of a prd.json and finds, per story of
// userStories, its "passes" value.
func passesSpans(data []byte) ([]passesSpan, error) {
	bom := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		bom = 3
	}
	dec := json.NewDecoder(bytes.NewReader(data[bom:]))
	tok := func() (json.Token, error) { return dec.Token() }
	// skip reads one whole value whose first token was t.
	var skip func(t json.Token) error
	skip = func(t json.Token) error {
		d, ok := t.(json.Delim)
		if !ok || (d != '{' && d != '[') {
			return nil
		}
		for {
			n, err := tok()
			if err != nil {
				return err
			}
			if e, ok := n.(json.Delim); ok && (e == '}' || e == ']') {
				return nil
			}
			if err := skip(n); err != nil {
				return err
			}
		}
	}
	if t, err := tok(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("prd.json is not a JSON object")
	}
	var spans []passesSpan
	for dec.More() {
		k, err := tok()
		if err != nil {
			return nil, err
		}
		v, err := tok()
		if err != nil {
			return nil, err
		}
		if k != "userStories" || v != json.Delim('[') {
			if err := skip(v); err != nil {
				return nil, err
			}
			continue
		}
		for dec.More() {
			st, err := tok()
			if err != nil {
				return nil, err
			}
			if st != json.Delim('{') {
				if err := skip(st); err != nil {
					return nil, err
				}
				spans = append(spans, passesSpan{from: -1, to: -1})
				continue
			}
			sp := passesSpan{from: -1}
			for dec.More() {
				key, err := tok()
				if err != nil {
					return nil, err
				}
				val, err := tok()
				if err != nil {
					return nil, err
				}
				if err := skip(val); err != nil {
					return nil, err
				}
				end := int(dec.InputOffset()) + bom
				sp.to = end
				if b, ok := val.(bool); ok && key == "passes" {
					sp.from = end - len(strconv.FormatBool(b))
				}
			}
			if sp.from >= 0 {
				// to is the end of the value, not of the story's last.
				for _, n := range []string{"true", "false"} {
					if bytes.HasPrefix(data[sp.from:], []byte(n)) {
						sp.to = sp.from + len(n)
					}
				}
			}
			if _, err := tok(); err != nil { // the story's }
				return nil, err
			}
			spans = append(spans, sp)
		}
		if _, err := tok(); err != nil && err != io.EOF { // the list's ]
			return nil, err
		}
	}
	return spans, nil
}
