package projectroot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// ErrNotYours is a project directory ralph refuses to keep a project in:
// the file system's root, a directory another user owns, a sticky one
// every user writes into (as /tmp), or one whose .ralph/ someone else
// made. Another user — or the model's commands, which may
// write /tmp — could have put a .ralph/config.toml there that sends the
// person's key to their own server.
var ErrNotYours = errors.New("not a directory of yours")

// rootError is why Find found no project: a sentence for the person that
// matches config.ErrInvalid (bad input, exit 2), and ErrNotYours when
// that is why.
type rootError struct {
	msg    string
	err    error
	theirs bool
}

func (e *rootError) Error() string { return e.msg }
func (e *rootError) Unwrap() error { return e.err }
func (e *rootError) Is(target error) bool {
	return target == config.ErrInvalid || e.theirs && target == ErrNotYours
}

func notYours(format string, args ...any) error {
	return &rootError{msg: fmt.Sprintf(format, args...), theirs: true}
}

func badDir(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &rootError{msg: msg, err: err}
}

// Found is the project a command works on and how it was found.
type Found struct {
	Root string
	// Why says what marked Root when the walk up from the working
	// directory found it above that directory ("found .ralph/ there");
	// "" when the project is the working directory or the one -C named.
	Why string
	// Warn, when set, is the whole sentence Note says: the walk passed
	// over a .ralph/ that ralph did not make for the person (see
	// rules.enclosing).
	Warn string
}

// Note is the sentence ralph starts with when the project is not the
// working directory, so that the person sees whose configuration and
// sessions a command uses; "" when there is nothing to say.
func (f Found) Note() string {
	if f.Warn != "" {
		return f.Warn
	}
	if f.Why == "" {
		return ""
	}
	return fmt.Sprintf("project is %s (%s)", f.Root, f.Why)
}

// Root is Find's project directory. Its errors, as Find's, match
// config.ErrInvalid and are one sentence each.
func Root(dir string, allowHome bool) (string, error) {
	f, err := Find(dir, allowHome)
	return f.Root, err
}

// Find finds the project a command works on. An explicit directory (-C)
// is the project itself. Otherwise ralph walks up from the working
// directory to the nearest directory holding .ralph/ — so a ralph started
// in a subdirectory meets the lock, the sessions and the configuration of
// the project it is in, instead of making a second .ralph/ there — and
// stops at the top of a git work tree, which is the project when no
// .ralph/ is found on the way; with neither, the working directory is the
// project.
//
// The walk never climbs into a directory where someone else could have put
// a .ralph/: the file system's root, the home directory, the temporary
// directories (/tmp, /var/tmp, /dev/shm and $TMPDIR, which need not be
// /tmp), and any directory that is sticky, world-writable or owned by
// another user. Whichever way it was found, the project directory must be
// the person's own and not a sticky directory every user writes into
// (ErrNotYours), and its .ralph/ the person's; git's safe.directory may
// allow a directory another user owns, as it does for git.
//
// The project found must also be Grantable: never the person's home or a
// directory holding their secrets or ralph's own files, unless allowHome
// (the person's --allow-home-project). Once granted, it is claimed as a
// root off which ralph's own programs are found (claimRoot).
func Find(dir string, allowHome bool) (Found, error) {
	f, err := defaultRules().find(dir)
	if err != nil {
		return f, err
	}
	if err := Grantable(f.Root, "the project", allowHome); err != nil {
		return f, err
	}
	return f, claimRoot(f.Root)
}

// rules are what Find judges directories by; tests replace the owner and
// the safe.directory answer, so the walk is tested without root.
type rules struct {
	uid   int                   // the person's
	sudo  int                   // the person's own under sudo (SUDO_UID, as git reads it), or -1
	owner func(os.FileInfo) int // a directory's owner, -1 when unknown
	safe  func(dir string) bool // git's safe.directory allows dir
	stops map[string]bool       // directories the walk never enters (nil: boundaries())
	// listed reports whether the person's registry lists dir as a
	// project; nil lists none.
	listed func(dir string) bool
}

func defaultRules() rules {
	r := rules{uid: os.Geteuid(), sudo: -1, owner: ownerOf, safe: func(dir string) bool {
		return git.SafeDirectory(context.Background(), dir)
	}, listed: registryLists()}
	// Git lets root started through sudo work in the invoking user's
	// repository; so does ralph, in their directories.
	if id, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && r.uid == 0 && id >= 0 {
		r.sudo = id
	}
	return r
}

// mine reports whether uid is the person's.
func (r rules) mine(uid int) bool {
	return uid == r.uid || r.sudo >= 0 && uid == r.sudo
}

func (r rules) find(dir string) (Found, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Found{}, badDir(err, "project directory %s", dir)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return Found{}, badDir(err, "project directory %s", dir)
		}
		if !fi.IsDir() {
			return Found{}, badDir(nil, "project directory %s is not a directory", dir)
		}
		return Found{Root: abs}, r.check(abs, true)
	}
	wd, err := os.Getwd()
	if err != nil {
		return Found{}, badDir(err, "cannot tell the working directory")
	}
	if r.stops == nil {
		r.stops = boundaries() // only the walk needs them
	}
	f := r.walk(wd)
	return f, r.check(f.Root, false)
}

// walk climbs from wd to the nearest directory holding .ralph/ or .git,
// never entering a boundary; wd itself when it finds neither.
func (r rules) walk(wd string) Found {
	for dir := wd; ; {
		if isDir(filepath.Join(dir, memory.StateDir)) {
			if outer := r.enclosing(dir); outer != "" {
				rel, err := filepath.Rel(outer, dir)
				if err != nil {
					rel = dir
				}
				return Found{Root: outer, Why: "the enclosing project", Warn: fmt.Sprintf("%s was not made by ralph for you (a command may have made it); the project is %s",
					filepath.ToSlash(filepath.Join(rel, memory.StateDir)), outer)}
			}
			return found(wd, dir, "found "+memory.StateDir+"/ there")
		}
		if exists(filepath.Join(dir, ".git")) {
			return found(wd, dir, "the top of its git work tree")
		}
		parent := filepath.Dir(dir)
		if parent == dir || r.boundary(parent) {
			return Found{Root: wd}
		}
		dir = parent
	}
}

// enclosing is the project a .ralph/ in d may have been made inside by
// one of its commands: the nearest directory above d, short of the walk's
// boundaries, that holds .ralph/ or .git and that the person's registry
// lists, when the registry does not list d. In the default sandbox only
// the project's own .ralph/ is read-only, so a command may mkdir
// pkg/.ralph; a project ralph made is listed from its first session on.
// "" when d's .ralph/ stands.
func (r rules) enclosing(d string) string {
	if r.listed == nil {
		return ""
	}
	for dir := d; ; {
		parent := filepath.Dir(dir)
		if parent == dir || r.boundary(parent) {
			return ""
		}
		dir = parent
		if (isDir(filepath.Join(dir, memory.StateDir)) || exists(filepath.Join(dir, ".git"))) && r.listed(dir) {
			if r.listed(d) {
				return ""
			}
			return dir
		}
	}
}

// registryLists reads the person's registry of projects once, when the
// walk first asks.
func registryLists() func(string) bool {
	var once sync.Once
	roots := map[string]bool{}
	return func(dir string) bool {
		once.Do(func() {
			entries, _ := memory.OpenRegistry(rootfs.Person(), memory.RegistryDir(os.Getenv)).List()
			for _, e := range entries {
				roots[filepath.Clean(e.Root)] = true
			}
		})
		return roots[filepath.Clean(dir)]
	}
}

func found(wd, dir, why string) Found {
	if dir == wd {
		return Found{Root: dir}
	}
	return Found{Root: dir, Why: why}
}

// boundary reports whether the walk up must not enter dir.
func (r rules) boundary(dir string) bool {
	if r.stops[dir] {
		return true
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return true
	}
	return shared(fi) || !r.mine(r.owner(fi))
}

// check refuses a project directory ralph may not keep a project in;
// explicit says -C named it, which the advice then leaves out.
func (r rules) check(dir string, explicit bool) error {
	other, orC := " (cd to a directory of your own, or name one with -C)", ", or name one with -C"
	if explicit {
		other, orC = "", ""
	}
	if filepath.Dir(dir) == dir {
		return notYours("ralph keeps no project in %s%s", dir, other)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return badDir(err, "project directory %s", dir)
	}
	// A sticky directory is where every user keeps their own files, as
	// /tmp; a world-writable one that is not sticky may be the person's
	// own on a file system that shows every file so (WSL's /mnt/c, vfat),
	// and is theirs to choose: its .ralph/ must still be theirs, below.
	if sticky(fi) {
		return notYours("%s is a directory every user may write (sticky, as /tmp is), so ralph keeps no project there "+
			"(make a directory of your own in it, e.g. mkdir %s, and run ralph there%s)", dir, filepath.Join(dir, "work"), orC)
	}
	// The directory's owner, when safe.directory lets ralph work in a
	// directory someone else owns, made its .ralph/ too.
	owner := r.owner(fi)
	if !r.mine(owner) && !r.safe(dir) {
		return notYours("%s belongs to uid %d, not to you (uid %d), so ralph keeps no project there "+
			"unless git's safe.directory names it%s", dir, owner, r.uid, other)
	}
	state := filepath.Join(dir, memory.StateDir)
	if fi, err := os.Lstat(state); err == nil {
		if uid := r.owner(fi); !r.mine(uid) && uid != owner {
			return notYours("%s belongs to uid %d, not to you (uid %d), so ralph reads nothing in it "+
				"(remove it, or name another project with -C)", state, uid, r.uid)
		}
	}
	return nil
}

// boundaries are the directories the walk up never enters, whatever their
// owner and mode: the file system's root, the home directory and the
// temporary directories. os.TempDir follows $TMPDIR, so the usual ones
// are named too: the model's commands may write /tmp.
func boundaries() map[string]bool {
	b := map[string]bool{string(filepath.Separator): true}
	for _, d := range append(tempDirs(), os.TempDir(), os.Getenv("HOME")) {
		if d == "" {
			continue
		}
		b[filepath.Clean(d)] = true
		if real, err := realpath.Eval(d); err == nil {
			b[real] = true
		}
	}
	return b
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
