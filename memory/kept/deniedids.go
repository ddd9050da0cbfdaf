package kept

import (
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// A hard link gives a file a second name, which no Read(…) rule names:
// `ln .env CLAUDE.md` in a sandbox that cannot stop it (the Landlock-only
// fallback) would bring the file into the next session's prompt by a
// name the rules pass. A rename of the file or of a directory above it
// (`mv config cfg2`, which needs no race and which the sandbox's cover
// over the file does not stop) leaves it with one name no rule names:
// the next checkpoint took cfg2/prod.env in, and read_file read it. So a
// file is judged by what it is too: its device and inode against those of
// the files the rules named when they were given to the door (Deny, at
// the session's start, before the model's first step), whatever its name
// now.

// deniedIDs are the identities of the files the door's rules named when
// they were given, and the rule that names each.
type deniedIDs struct {
	mu  sync.RWMutex
	ids map[fileID]Rule
}

// maxDeniedIDs bounds the files whose identities are taken, so that a
// rule over a large tree costs one bounded walk.
const maxDeniedIDs = 4096

// deniedBy returns the rule that named the file id is, if any.
func (d *Door) deniedBy(id identity) (Rule, bool) {
	if d == nil || !id.known {
		return Rule{}, false
	}
	d.ids.mu.RLock()
	defer d.ids.mu.RUnlock()
	r, ok := d.ids.ids[id.file]
	return r, ok
}

// deniedAt returns the rule that named the file at path p (absolute; a
// link is not followed, and judged by its own path) by what it is, if
// any: the check Refuses adds to the rules' paths.
func (d *Door) deniedAt(p string) (Rule, bool) {
	if d == nil {
		return Rule{}, false
	}
	d.ids.mu.RLock()
	none := len(d.ids.ids) == 0
	d.ids.mu.RUnlock()
	if none {
		return Rule{}, false
	}
	l, ok := rootfs.Person().(afero.Lstater)
	if !ok {
		return Rule{}, false
	}
	fi, _, err := l.LstatIfPossible(p)
	if err != nil || !fi.Mode().IsRegular() {
		return Rule{}, false
	}
	fid, ok := idOf(fi)
	return d.deniedBy(identity{file: fid, known: ok})
}

// takeDeniedIDs finds the identities of the files the rules name now.
func (d *Door) takeDeniedIDs() {
	ids := d.findDeniedIDs()
	d.ids.mu.Lock()
	d.ids.ids = ids
	d.ids.mu.Unlock()
}

// findDeniedIDs walks what the rules name (Resolve: the uppermost paths
// that exist, a directory standing for all below it) and takes each
// regular file's identity, with the rule that names the path walked from.
func (d *Door) findDeniedIDs() map[fileID]Rule {
	ids := map[fileID]Rule{}
	person := rootfs.Person()
	rules := d.Rules()
	paths, _ := rules.Resolve(d.root)
	for _, base := range paths {
		r, ok := rules.Match(d.root, base)
		if !ok {
			continue
		}
		_ = afero.Walk(person, base, func(p string, fi fs.FileInfo, err error) error {
			if err != nil || len(ids) >= maxDeniedIDs {
				return filepath.SkipDir
			}
			if fi.Mode().IsRegular() {
				if fid, ok := idOf(fi); ok {
					ids[fid] = r
				}
			}
			return nil
		})
	}
	return ids
}
