package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A skill's other files (scripts, templates, references) are read as
// files. A project skill's lie in the project, where read_file reads
// them; a skill of the person's own (~/.claude/skills, ralph's config) or
// of a plugin lies outside it, so the skill tool reads them, through a
// door on the skill's own directory: the model is handed that directory
// and nothing beside it, and a link out of it is refused.

// Bounds of what the skill tool hands over of a skill's directory.
const (
	// MaxFiles is how many of a skill's other files Files lists.
	MaxFiles = 100
	// FileLimit is how much of one file ReadFile returns.
	FileLimit = 256 << 10
)

// ErrNotInSkill says a path names no file inside the skill's directory.
var ErrNotInSkill = errors.New("not a file inside the skill's directory")

// door opens a door on the skill's directory, through the door the skill
// was found through, so reaching the directory never leaves that root.
// A test's in-memory file system has no links and serves as it is.
func (s Skill) door() (afero.Fs, func(), error) {
	if s.fsys == nil {
		return nil, nil, fmt.Errorf("skill %s: no file system to read it through", s.Name)
	}
	r, ok := s.fsys.(*rootfs.Fs)
	if !ok {
		return s.fsys, func() {}, nil
	}
	sub, err := r.Sub(s.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skill %s: its directory: %w", s.Name, err)
	}
	return sub, func() { _ = sub.Close() }, nil
}

// Files lists the skill's other files, relative to its directory, sorted,
// at most MaxFiles (more says some were left out). Links are listed as
// files are, and refused when read if they lead out.
func (s Skill) Files() (files []string, more bool, err error) {
	d, done, err := s.door()
	if err != nil {
		return nil, false, err
	}
	defer done()
	errFull := errors.New("full")
	err = afero.Walk(d, s.Dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, rerr := filepath.Rel(s.Dir, path)
		if rerr != nil || rel == "." || info.IsDir() || rel == "SKILL.md" {
			return nil
		}
		if len(files) == MaxFiles {
			more = true
			return errFull
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, false, fmt.Errorf("skill %s: %w", s.Name, err)
	}
	slices.Sort(files)
	return files, more, nil
}

// ReadFile reads the skill's file rel (relative to its directory), at most
// FileLimit bytes (truncated says it held more), through a door on the
// skill's directory: a path out of it, or a link that leads out, is
// refused.
func (s Skill) ReadFile(rel string) (data []byte, truncated bool, err error) {
	rel = filepath.FromSlash(rel)
	if !filepath.IsLocal(rel) {
		return nil, false, fmt.Errorf("skill %s: %s: %w", s.Name, rel, ErrNotInSkill)
	}
	d, done, err := s.door()
	if err != nil {
		return nil, false, err
	}
	defer done()
	txt, err := s.keep.ReadHead(d, filepath.Join(s.Dir, rel), FileLimit+1)
	data = txt.Data
	if err != nil {
		return nil, false, fmt.Errorf("skill %s: %s: %s: %w", s.Name, filepath.ToSlash(rel), reason(err), ErrNotInSkill)
	}
	if len(data) > FileLimit {
		return data[:FileLimit], true, nil
	}
	return data, false, nil
}
