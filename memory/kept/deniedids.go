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
// name the rules pass. So a file with more than one name is judged by
// what it is too: its device and inode against those of the files the
// rules name, found once (deniedIDs) the first time such a file is read.

// deniedIDs are the identities of the files the door's rules name, and
// the rule that names each, found once.
type deniedIDs struct {
	once sync.Once
	ids  map[fileID]Rule
}

// maxDeniedIDs bounds the files whose identities are taken, so that a
// rule over a large tree costs one bounded walk.
const maxDeniedIDs = 4096

// deniedBy returns the rule naming the file id is, if any: only a file
// with a second name is looked up.
func (d *Door) deniedBy(id identity, links uint64) (Rule, bool) {
	if !id.known || links < 2 || !d.Denies() {
		return Rule{}, false
	}
	d.ids.once.Do(func() { d.ids.ids = d.findDeniedIDs() })
	r, ok := d.ids.ids[id.file]
	return r, ok
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
