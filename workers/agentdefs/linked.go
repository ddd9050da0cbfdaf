package agentdefs

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// A linked folder under the person's own ~/.claude/agents (the install
// awesome-claude-agents' README recommends: `ln -s ~/src/awesome-claude-agents/agents
// ~/.claude/agents/awesome-claude-agents`) is the person's, as the folder
// that holds it is: it is followed, through a door of its own on the
// link's target, so a link out of that clone is refused in turn. A link
// that leads into the project or into the temporary directory the
// model's commands write is the model's, and is not followed; nor is any
// link under a project's .claude/agents (walk never asks), nor under a
// ~/.claude that lies in the project (--allow-home-project), which is
// the project's, not the person's.

// linkedDir is a linked folder to walk: its door, its real path and its
// name as the person sees it.
type linkedDir struct {
	door  afero.Fs
	dir   string
	shown string
}

// resolved is path with its links resolved, or path itself when it
// cannot be.
func resolved(path string) string {
	if path == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// within reports whether path is root or lies under it.
func within(root, path string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// theirs is the person's folder dir, links resolved, when it is theirs:
// "" when it lies in the project or where the model's commands write.
func (s *Set) theirs(dir string) string {
	real := resolved(dir)
	if within(s.root, real) || s.writable != nil && s.writable(real) {
		return ""
	}
	return real
}

// linked is the folder the link at path leads to, when it is one of the
// person's (see above); a link that is not followed is said in Warnings,
// unless it leads to no folder at all (a link to a file is read as the
// file, through the door, which refuses it when it leads out).
func (s *Set) linked(path, shown string) (linkedDir, bool) {
	if s.personHome == "" {
		return linkedDir{}, false
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return linkedDir{}, false
	}
	if fi, err := rootfs.Person().Stat(target); err != nil || !fi.IsDir() {
		return linkedDir{}, false
	}
	if s.theirs(target) == "" {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s is a link to %s, where the model can write, so ralph does not read its agent definitions.",
			text.StripControls(shown), text.StripControls(target)))
		return linkedDir{}, false
	}
	door, err := rootfs.New(target)
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s could not be opened, so its agent definitions are not used: %v.", text.StripControls(shown), err))
		return linkedDir{}, false
	}
	return linkedDir{door: door, dir: target, shown: shown}, true
}
