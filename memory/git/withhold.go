package git

import (
	"path/filepath"
	"slices"
	"strings"
)

// Door is what a checkpoint asks before it takes a file of the work tree
// in: the session's door (memory/kept's Door), which refuses a path a
// person's Read(…) deny rule names and ralph's kept list. A checkpoint's
// objects sit under refs/ralph/ in the repository, which the model's
// commands may read with git show: a file taken in there would reach the
// model past the sandbox's cover over the file itself.
type Door interface {
	// Refuses says why a path (absolute) may not reach the model; nil
	// when it may.
	Refuses(paths ...string) error
}

// SetDoor has every later checkpoint leave out the files door refuses.
// Undo then cannot put such a file back; a file the person committed
// stays in the checkpoints as their own history has it.
func (c *Checkpoints) SetDoor(door Door) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.door = door
}

// withhold returns paths (relative to the top) without those the door
// refuses: the one filter every path a checkpoint takes in from the work
// tree passes (take, rawDiffers; see withhold_guard_test.go). A refused
// path stays in ralph's index as it was, so the checkpoint's tree keeps
// what the person's index held for it (their own commit's version, or
// nothing), and no diff between checkpoints ever names it. paths is
// filtered in place.
func (c *Checkpoints) withhold(paths []string) []string {
	if c.door == nil || len(paths) == 0 {
		return paths
	}
	// Each directory is resolved once: ten thousand files of one
	// directory were ten thousand walks of an lstat per component.
	resolved := map[string]string{}
	return slices.DeleteFunc(paths, func(p string) bool {
		abs := c.repo.Abs(strings.TrimSuffix(p, "/"))
		// The path as the tree spells it, and as its directories'
		// links resolve: a rule names the file where it lies.
		forms := []string{abs}
		parent := filepath.Dir(abs)
		dir, ok := resolved[parent]
		if !ok {
			dir, _ = filepath.EvalSymlinks(parent)
			resolved[parent] = dir
		}
		if dir != "" {
			forms = append(forms, filepath.Join(dir, filepath.Base(abs)))
		}
		return c.door.Refuses(forms...) != nil
	})
}
