package childenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/realpath"
)

// ralph runs with the person's rights, so a program it starts for itself
// (git, an agent's CLI, doctor's version checks, bd, the shell of the
// person's notify_command, hooks and $EDITOR) must be one the person
// installed, never one the model wrote. An activated virtualenv or direnv
// (`layout python`, `PATH_add bin`) puts directories of the project first
// on PATH, and the model writes the project: `.venv/bin/git` would run as
// the person at ralph's next checkpoint. Go's exec.ErrDot refuses only a
// relative PATH entry, not /project/.venv/bin. So this file is the one
// resolver: a program's name is looked up on PATH without relative entries
// and without entries inside any root the model may write (the project,
// each --add-dir, each sandbox_writable entry: AddRoots; and the shared
// temporary directories /dev/shm and /var/tmp, from the start), once per
// name, and the absolute path it found
// is what runs. A guard test (workers/programs_guard_test.go) fails on a
// bare-name exec.Command or an exec.LookPath anywhere else.

// ErrInProject is the error of Program for a name found on PATH only
// inside a root the model may write: the person's program of that name is
// not on PATH, and the one there may be the model's.
var ErrInProject = errors.New("found on PATH only inside the project")

// InProjectError is ErrInProject for one program: where it was found.
type InProjectError struct {
	Name, Path string
}

func (e *InProjectError) Error() string {
	return fmt.Sprintf("%s is on PATH only inside the project (%s), where the model may write it", e.Name, e.Path)
}

func (e *InProjectError) Is(target error) bool { return target == ErrInProject }

var (
	rootsMu sync.RWMutex
	// roots are the directories the model may write, as given (absolute,
	// clean) and with their links resolved.
	roots []string
	// rootsGen counts the changes of roots.
	rootsGen int
	// found are the programs resolved so far, by name and PATH.
	found = map[string]resolution{}
	// cleaned are search-path values with the roots' entries taken off,
	// by variable and value (PersonEnv runs for every git ralph starts).
	cleaned = map[string]string{}
)

// sharedRoots are directories every user, and so the model's commands,
// may write on any project: a PATH or PYTHONPATH entry there (a tool that
// unpacks itself into /dev/shm) holds files the model may have planted.
// They are roots from the start. $TMPDIR and /tmp are not among them yet:
// see docs/sandbox.md.
var sharedRoots = []string{"/dev/shm", "/var/tmp"}

// sharedOnce adds sharedRoots, at the first use of the roots rather than
// in init: resolving them costs every start of ralph system calls, and
// `ralph --version` starts no program.
var sharedOnce sync.Once

// withShared makes sure sharedRoots are among the roots; every function
// that reads or changes the roots calls it first.
func withShared() {
	sharedOnce.Do(func() {
		if runtime.GOOS != "windows" {
			addRoots(sharedRoots...)
		}
	})
}

type resolution struct {
	path string
	err  error
}

// AddRoots records dirs as directories the model may write (the project,
// an --add-dir, a sandbox_writable entry such as ~/.cargo): from now on
// no program is found in them and PersonEnv takes them off every search
// path. A program resolved before that lies in one of them is resolved
// again (the project is known only once it is found, and a git may have
// been asked for before).
func AddRoots(dirs ...string) {
	withShared()
	addRoots(dirs...)
}

// addRoots is AddRoots without the shared roots first.
func addRoots(dirs ...string) {
	rootsMu.Lock()
	defer rootsMu.Unlock()
	added := false
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		forms := []string{filepath.Clean(abs)}
		if real, err := realpath.Eval(abs); err == nil && real != forms[0] {
			forms = append(forms, real)
		}
		for _, f := range forms {
			if !slices.Contains(roots, f) {
				roots = append(roots, f)
				added = true
			}
		}
	}
	if !added {
		return
	}
	for k, r := range found {
		if r.err != nil || insideAny(r.path, roots) {
			delete(found, k)
		}
	}
	rootsGen++
	clear(cleaned)
}

// Roots are the directories AddRoots recorded.
func Roots() []string {
	withShared()
	rootsMu.RLock()
	defer rootsMu.RUnlock()
	return slices.Clone(roots)
}

// Program is the absolute path of the program name for ralph to run for
// itself: name as it is when it holds a path separator (the person named
// that file), else the first executable of that name on ralph's PATH,
// skipping relative entries and entries inside the roots. It is looked up
// once per name and PATH; later calls return the same path, so a program
// planted on PATH after ralph started is never taken. Errors wrap
// exec.ErrNotFound, or are an *InProjectError (ErrInProject) when the
// name is found only inside a root.
func Program(name string) (string, error) {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	pathList := os.Getenv("PATH")
	withShared()
	key := name + "\x00" + pathList
	rootsMu.RLock()
	r, ok := found[key]
	rootsMu.RUnlock()
	if ok {
		return r.path, r.err
	}
	rootsMu.Lock()
	defer rootsMu.Unlock()
	if r, ok := found[key]; ok {
		return r.path, r.err
	}
	r.path, r.err = lookPath(name, pathList, roots)
	found[key] = r
	return r.path, r.err
}

// LookPathIn is Program for a PATH of the program's own (an MCP server's
// env may set one), not remembered: name is looked up in the absolute
// entries of pathList outside the roots and extra.
func LookPathIn(name, pathList string, extra ...string) (string, error) {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	withShared()
	rootsMu.RLock()
	defer rootsMu.RUnlock()
	return lookPath(name, pathList, append(slices.Clone(roots), extra...))
}

// lookPath finds an executable name in the directories of pathList, as
// exec.LookPath does, skipping relative entries and those inside roots.
// On Windows a program is a file with one of PATHEXT's extensions, and
// has no executable bit.
func lookPath(name, pathList string, roots []string) (string, error) {
	exts := []string{""}
	if runtime.GOOS == "windows" {
		exts = append(exts, filepath.SplitList(strings.ReplaceAll(os.Getenv("PATHEXT"), ";", string(os.PathListSeparator)))...)
		if len(exts) == 1 {
			exts = append(exts, ".com", ".exe", ".bat", ".cmd")
		}
	}
	inProject := ""
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() || runtime.GOOS != "windows" && fi.Mode()&0o111 == 0 {
				continue
			}
			if insideAny(dir, roots) || insideAny(p, roots) {
				if inProject == "" {
					inProject = p
				}
				continue
			}
			return p, nil
		}
	}
	if inProject != "" {
		return "", &InProjectError{Name: name, Path: inProject}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// Inside reports whether path lies at or under root, as written or once
// the links of its existing part are resolved. A relative path is never
// inside.
func Inside(path, root string) bool {
	if root == "" || !filepath.IsAbs(path) {
		return false
	}
	path, root = filepath.Clean(path), filepath.Clean(root)
	if within(root, path) {
		return true
	}
	realRoot, err := realpath.Eval(root)
	if err != nil {
		return false
	}
	if within(realRoot, path) {
		return true
	}
	real, ok := resolveExisting(path)
	return ok && within(realRoot, real)
}

// insideAny reports whether path is Inside one of roots.
func insideAny(path string, roots []string) bool {
	return formsOf(roots).hold(path)
}

// rootForms are roots, each clean and with its links resolved (empty
// where it cannot be), for asking Inside of many paths: resolving every
// root again for each PATH entry was most of what the first git of a
// process paid for its environment.
type rootForms struct{ clean, real []string }

func formsOf(roots []string) rootForms {
	var f rootForms
	for _, r := range roots {
		if r == "" {
			continue
		}
		real, err := realpath.Eval(r)
		if err != nil {
			real = ""
		}
		f.clean, f.real = append(f.clean, filepath.Clean(r)), append(f.real, real)
	}
	return f
}

// hold reports whether path is Inside one of the roots, resolving path's
// links once, and only when its own form lies in none of them.
func (f rootForms) hold(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	for i := range f.clean {
		if within(f.clean[i], path) || f.real[i] != "" && within(f.real[i], path) {
			return true
		}
	}
	real, ok := "", false
	for i := range f.real {
		if f.real[i] == "" {
			continue
		}
		if !ok {
			if real, ok = resolveExisting(path); !ok {
				return false
			}
		}
		if within(f.real[i], real) {
			return true
		}
	}
	return false
}

// within reports whether p is root or lies beneath it, both clean.
func within(root, p string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// resolveExisting resolves the links of the longest existing part of abs
// and appends the rest unchanged: a PATH entry that does not exist yet
// may still lie beneath a link into a root.
func resolveExisting(abs string) (string, bool) {
	var rest []string
	for cur := abs; ; {
		if real, err := realpath.Eval(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...), true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
