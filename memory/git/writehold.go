package git

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// heldFile is a file written whole at its temporary name, tmp, in the
// directory dir (relative to the root), waiting to be put in place of
// name.
type heldFile struct {
	dir, tmp, name string
}

// writeHolding writes the blobs of paths from one `git cat-file --batch`
// (writeCat: converted with filters, each checked against its name as it
// is written with check), and puts the files in place only once every
// one is written whole: a blob that fails, or a read or write that does,
// leaves every file as it was and no temporary file behind. The writes
// overlap git's reading; the renames come after.
func (r *Repo) writeHolding(ctx context.Context, b *beneath, tree map[string]treeEntry, paths []string, filters, check bool) error {
	b.mu.Lock()
	b.holding, b.held = true, nil
	b.mu.Unlock()
	err := r.writeCat(ctx, b, tree, paths, filters, check)
	b.mu.Lock()
	held := b.held
	b.holding, b.held = false, nil
	b.mu.Unlock()
	if err != nil {
		b.dropHeld(held)
		if errors.Is(err, ErrObjectChanged) {
			return fmt.Errorf("%w; nothing was restored", err)
		}
		return err
	}
	return b.installHeld(held)
}

// hold takes the temporary file tmp of the directory rel, to be put in
// place of name later, and says so; false when b is not holding files
// and the writer puts it in place itself.
func (b *beneath) hold(rel, tmp, name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return false
	}
	b.held = append(b.held, heldFile{dir: rel, tmp: tmp, name: name})
	return true
}

// installHeld puts the held files in place, in the order written. One that
// cannot be put in place ends the restore there with its error; the rest
// are removed.
func (b *beneath) installHeld(held []heldFile) error {
	for i, h := range held {
		d, done, err := b.dir(h.dir, true)
		if err == nil {
			err = b.installTemp(h.dir, d, h.tmp, h.name)
			done()
		}
		if err != nil {
			b.dropHeld(held[i+1:])
			return fmt.Errorf("restore: %s: %w", filepath.ToSlash(filepath.Join(h.dir, h.name)), err)
		}
	}
	return nil
}

// dropHeld removes the temporary files of held.
func (b *beneath) dropHeld(held []heldFile) {
	for _, h := range held {
		if d, done, err := b.dir(h.dir, false); err == nil {
			_ = d.Remove(h.tmp)
			done()
		}
	}
}
