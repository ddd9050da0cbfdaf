package workers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutsideRoot is wrapped by Resolve when a path leaves the project root,
// lexically or through a symlink.
var ErrOutsideRoot = errors.New("path is outside the project root")

// maxSymlinkHops bounds how many dangling symlinks resolution follows by hand,
// matching the kernel's own limit so that loops end with an error.
const maxSymlinkHops = 40

// skipNames are directories (or files) that listing and searching never enter:
// version control internals, ralph's own state, and vendored JavaScript, all
// of which drown the model in noise.
var skipNames = map[string]bool{".git": true, ".ralph": true, "node_modules": true}

// Resolve maps a path given by the model to an absolute path inside the
// project root with symlinks resolved. Relative paths are taken from the root;
// absolute paths must already be inside it. A path that does not exist yet is
// checked through its deepest existing ancestor, so a file cannot be created
// through a symlink that points outside the root. Violations wrap
// ErrOutsideRoot.
func (t *Toolset) Resolve(path string) (string, error) {
	real, _, err := t.resolve(path)
	return real, err
}

// resolve is Resolve that also returns the path to show the model: slash
// separated and relative to the root, spelled the way the model spelled it
// (before symlinks are followed) so that messages match its request.
func (t *Toolset) resolve(p string) (real, display string, err error) {
	rel, display, err := t.lexical(p)
	if err != nil {
		return "", display, err
	}
	real, err = evalExisting(filepath.Join(t.root, rel))
	if err != nil {
		return "", display, fmt.Errorf("resolve %s: %w", p, err)
	}
	if !isInside(t.root, real) {
		return "", display, fmt.Errorf("%w: %s", ErrOutsideRoot, p)
	}
	return real, display, nil
}

// lexical maps a path given by the model to a clean path relative to the
// root, without looking at the filesystem: ".." that climbs out of the
// root and absolute paths elsewhere wrap ErrOutsideRoot, and "~" wraps
// errHome. Symlinks are left to whoever opens the path.
func (t *Toolset) lexical(p string) (rel, display string, err error) {
	if p == "" {
		p = "."
	}
	if first, _, _ := strings.Cut(filepath.ToSlash(p), "/"); strings.HasPrefix(first, "~") {
		// Models write ~/x meaning the home directory; taken literally it
		// would create a directory named "~" in the project.
		return "", p, fmt.Errorf("%w: %s", errHome, p)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		// Accept absolute paths spelled through the root as configured when
		// the root itself is reached through a symlink.
		if !isInside(t.root, abs) && isInside(t.rootLex, abs) {
			rel, _ := filepath.Rel(t.rootLex, abs)
			abs = filepath.Join(t.root, rel)
		}
	} else {
		abs = filepath.Join(t.root, p)
	}
	if !isInside(t.root, abs) {
		return "", p, fmt.Errorf("%w: %s", ErrOutsideRoot, p)
	}
	rel, _ = filepath.Rel(t.root, abs)
	return rel, filepath.ToSlash(rel), nil
}

// errHome is wrapped for paths that start with "~".
var errHome = errors.New("path starts with ~")

// isInside reports whether the clean absolute path p is root or below it.
func isInside(root, p string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// evalExisting resolves the symlinks in abs as far as the path exists and
// appends the missing remainder unchanged. Dangling symlinks are followed by
// hand, because writing to one creates its target and that target must be
// checked too.
func evalExisting(abs string) (string, error) {
	cur := abs
	var rest []string // missing components, innermost last
	hops := 0
	for {
		fi, err := os.Lstat(cur)
		if err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err == nil {
				return filepath.Join(append([]string{real}, rest...)...), nil
			}
			if fi.Mode()&fs.ModeSymlink == 0 || !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			// A dangling symlink: continue from its target.
			if hops++; hops > maxSymlinkHops {
				return "", fmt.Errorf("%s: too many levels of symbolic links", abs)
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
				if err != nil {
					return "", err
				}
				target = filepath.Join(dir, target)
			}
			cur = filepath.Clean(target)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(append([]string{cur}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// pathResult turns a resolution error into the sentence the model sees.
func pathResult(p string, err error) Result {
	switch {
	case errors.Is(err, ErrOutsideRoot):
		return errResult("path %s is outside the project root", p)
	case errors.Is(err, errHome):
		return errResult("path %s starts with ~, which is not expanded: paths are relative to the project root, so name a place inside the project", p)
	}
	return errResult("cannot use path %s: %v", p, err)
}

// refusal is the sentence for a failed file operation: a path that may not
// be used, or a filesystem error, in terms of the path the model gave.
func refusal(action, p, display string, err error) Result {
	switch {
	case errors.Is(err, ErrOutsideRoot), errors.Is(err, errHome), errors.Is(err, syscall.ELOOP):
		return pathResult(p, err)
	case errors.Is(err, ErrProtected):
		return errResult("cannot %s %s: .git and .ralph are protected (git's internals and ralph's own state), so the file tools never change anything in them", action, display)
	case errors.Is(err, errNotRegular):
		return errResult("cannot %s %s: it is not a regular file", action, display)
	}
	return fsErrorResult(action, display, err)
}

// fsErrorResult describes a file system error in terms of the path the model
// used rather than the absolute path inside the error.
func fsErrorResult(action, display string, err error) Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errResult("cannot %s %s: it does not exist", action, display)
	case errors.Is(err, fs.ErrPermission):
		return errResult("cannot %s %s: permission denied", action, display)
	case errors.Is(err, syscall.ENOTDIR):
		return errResult("cannot %s %s: a parent of it is a file, not a directory", action, display)
	case errors.Is(err, syscall.EISDIR):
		return errResult("cannot %s %s: it is a directory", action, display)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errResult("cannot %s %s: %v", action, display, pe.Err)
	}
	return errResult("cannot %s %s: %v", action, display, err)
}

// relSlash returns the slash separated path of real relative to the root.
func (t *Toolset) relSlash(real string) string {
	rel, err := filepath.Rel(t.root, real)
	if err != nil {
		return filepath.ToSlash(real)
	}
	return filepath.ToSlash(rel)
}
