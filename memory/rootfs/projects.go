package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"
)

// Projects is the file system of the views across every project of the
// registry (ralph serve, ralph sessions): they read many projects'
// records with one file system. A path under a project goes through that
// project's own door, so a record a command linked out of the project is
// not followed there either; any other path (the registry, the state
// directory) is the person's own. A project is known by a path that
// names its .ralph directory (every view reads a project's records there
// first), or by Add.
type Projects struct {
	person afero.Fs
	mu     sync.Mutex
	doors  map[string]*Fs
}

var _ afero.Fs = (*Projects)(nil)

// NewProjects is a view across projects, knowing none yet.
func NewProjects() *Projects { return &Projects{person: Person(), doors: map[string]*Fs{}} }

// Add makes root a project of the view, so that its paths outside .ralph
// (RALPH_TASKS.md) go through its door too.
func (p *Projects) Add(root string) error {
	_, err := p.door(filepath.Clean(root))
	return err
}

func (p *Projects) door(root string) (*Fs, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, ok := p.doors[root]; ok {
		return d, nil
	}
	d, err := New(root)
	if err != nil {
		return nil, err
	}
	p.doors[root] = d
	return d, nil
}

// route is the file system name goes through: the door of the project
// that holds it, or the person's.
func (p *Projects) route(name string) (afero.Fs, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	sep := string(filepath.Separator)
	if i := strings.Index(abs+sep, sep+".ralph"+sep); i > 0 {
		return p.door(abs[:i])
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := ""
	for root, d := range p.doors {
		if len(root) > len(best) && d.Contains(abs) {
			best = root
		}
	}
	if best != "" {
		return p.doors[best], nil
	}
	return p.person, nil
}

func (p *Projects) Name() string { return "rootfs.Projects" }

func (p *Projects) Open(name string) (afero.File, error) {
	f, err := p.route(name)
	if err != nil {
		return nil, err
	}
	return f.Open(name)
}

func (p *Projects) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := p.route(name)
	if err != nil {
		return nil, err
	}
	return f.OpenFile(name, flag, perm)
}

func (p *Projects) Create(name string) (afero.File, error) {
	f, err := p.route(name)
	if err != nil {
		return nil, err
	}
	return f.Create(name)
}

func (p *Projects) Stat(name string) (os.FileInfo, error) {
	f, err := p.route(name)
	if err != nil {
		return nil, err
	}
	return f.Stat(name)
}

func (p *Projects) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	f, err := p.route(name)
	if err != nil {
		return nil, false, err
	}
	if l, ok := f.(afero.Lstater); ok {
		return l.LstatIfPossible(name)
	}
	fi, err := f.Stat(name)
	return fi, false, err
}

func (p *Projects) Mkdir(name string, perm os.FileMode) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.Mkdir(name, perm)
}

func (p *Projects) MkdirAll(name string, perm os.FileMode) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.MkdirAll(name, perm)
}

func (p *Projects) Remove(name string) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.Remove(name)
}

func (p *Projects) RemoveAll(name string) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.RemoveAll(name)
}

// Rename renames within one file system only: a rename across projects,
// or out of one, is refused.
func (p *Projects) Rename(oldname, newname string) error {
	from, err := p.route(oldname)
	if err != nil {
		return err
	}
	to, err := p.route(newname)
	if err != nil {
		return err
	}
	if from != to {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fmt.Errorf("%w: across projects", fs.ErrInvalid)}
	}
	return from.Rename(oldname, newname)
}

func (p *Projects) Chmod(name string, mode os.FileMode) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.Chmod(name, mode)
}

func (p *Projects) Chown(name string, uid, gid int) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.Chown(name, uid, gid)
}

func (p *Projects) Chtimes(name string, atime, mtime time.Time) error {
	f, err := p.route(name)
	if err != nil {
		return err
	}
	return f.Chtimes(name, atime, mtime)
}
