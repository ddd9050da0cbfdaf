// Package shown remembers which notices a person has seen, so that one
// that would say the same again is not shown again: the variables withheld
// from commands were named in every session, in chat and one-shot alike
// (issue 92). The record is the person's, in their state directory
// (memory.RegistryDir), never the project's .ralph/, which the model's
// commands could write to silence a notice.
package shown

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// File is the record's name in the person's state directory.
const File = "notices-shown.json"

// maxRecord bounds what is read of the record: a few hundred notices.
const maxRecord = 1 << 20

// Record is the record of the notices a person was shown, in one state
// directory. It is safe for concurrent use; two ralphs at once may each
// show a notice once, which is all a lost update costs.
type Record struct {
	mu   sync.Mutex
	fs   afero.Fs
	path string
}

// Open is the record in dir (memory.RegistryDir); nothing is read or
// written until Fresh.
func Open(fs afero.Fs, dir string) *Record {
	return &Record{fs: fs, path: filepath.Join(dir, File)}
}

// record is the file's content: for each notice, the names it was last
// shown with, sorted.
type record struct {
	Shown map[string][]string `json:"shown"`
}

// Fresh reports whether the notice key, naming names, is news to the
// person: the first time, and whenever the set of names changed since it
// was last shown. It records the set as shown when it is news. A record
// that cannot be read or written counts the notice as news: a notice
// shown once too often costs less than one never shown. A nil Record
// always reports true.
func (s *Record) Fresh(key string, names []string) bool {
	if s == nil {
		return true
	}
	set := slices.Clone(names)
	slices.Sort(set)
	set = slices.Compact(set)
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.read()
	if err != nil {
		return true
	}
	if old, ok := r.Shown[key]; ok && slices.Equal(old, set) {
		return false
	}
	r.Shown[key] = set
	_ = s.write(r)
	return true
}

// read loads the record; a missing or unreadable one is empty, since it is
// a convenience that the next notices rebuild.
func (s *Record) read() (record, error) {
	r := record{Shown: map[string][]string{}}
	b, err := afero.ReadFile(s.fs, s.path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading %s: %w", s.path, err)
	}
	if len(b) > maxRecord || json.Unmarshal(b, &r) != nil || r.Shown == nil {
		return record{Shown: map[string][]string{}}, nil
	}
	return r, nil
}

// write replaces the record whole (memory.WriteFileAtomicUnsynced: a
// crash of the machine costs at most a notice shown again).
func (s *Record) write(r record) error {
	if err := s.fs.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("making %s: %w", filepath.Dir(s.path), err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", s.path, err)
	}
	if err := memory.WriteFileAtomicUnsynced(s.fs, s.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
}

// Key is a notice's key made of parts (a notice and the file it is about),
// so that one notice about two files is remembered for each.
func Key(parts ...string) string { return strings.Join(parts, "\x00") }
