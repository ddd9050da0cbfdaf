package workers

import (
	"context"
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
// ErrOutsideRoot. display is the path to show the model: slash separated and
// relative to the root, spelled the way the model spelled it (before symlinks
// are followed) so that messages match its request.
func (w *Workspace) Resolve(p string) (real, display string, err error) {
	rel, display, err := w.Lexical(p)
	if err != nil {
		return "", display, err
	}
	real, err = evalExisting(filepath.Join(w.root, rel))
	if err != nil {
		return "", display, fmt.Errorf("resolve %s: %w", p, err)
	}
	if !isInside(w.root, real) {
		return "", display, fmt.Errorf("%w: %s", ErrOutsideRoot, p)
	}
	if w.Kept(real) || w.Kept(filepath.Join(w.root, rel)) {
		return "", display, w.keptErr(p, real, filepath.Join(w.root, rel))
	}
	return real, display, nil
}

// Lexical maps a path given by the model to a clean path relative to the
// root, without looking at the filesystem: ".." that climbs out of the
// root and absolute paths elsewhere wrap ErrOutsideRoot, and "~" wraps
// ErrHome. Symlinks are left to whoever opens the path.
func (w *Workspace) Lexical(p string) (rel, display string, err error) {
	if p == "" {
		p = "."
	}
	if first, _, _ := strings.Cut(filepath.ToSlash(p), "/"); strings.HasPrefix(first, "~") {
		// Models write ~/x meaning the home directory; taken literally it
		// would create a directory named "~" in the project.
		return "", p, fmt.Errorf("%w: %s", ErrHome, p)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		// Accept absolute paths spelled through the root as configured when
		// the root itself is reached through a symlink.
		if !isInside(w.root, abs) && isInside(w.rootLex, abs) {
			rel, _ := filepath.Rel(w.rootLex, abs)
			abs = filepath.Join(w.root, rel)
		}
	} else {
		abs = filepath.Join(w.root, p)
	}
	if !isInside(w.root, abs) {
		return "", p, fmt.Errorf("%w: %s", ErrOutsideRoot, p)
	}
	rel, _ = filepath.Rel(w.root, abs)
	return rel, filepath.ToSlash(rel), nil
}

// ErrHome is wrapped for paths that start with "~".
var ErrHome = errors.New("path starts with ~")

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

// RelSlash returns the slash separated path of real relative to the root.
func (w *Workspace) RelSlash(real string) string {
	rel, err := filepath.Rel(w.root, real)
	if err != nil {
		return filepath.ToSlash(real)
	}
	return filepath.ToSlash(rel)
}

// Walk walks the directory (or file) real in lexical order,
// skipping the directories in skipNames and unreadable directories, and
// stops early when ctx is done. Symlinks are reported but never followed,
// and every directory is opened beneath the root (see beneath.go), so a
// directory swapped for a symlink mid-walk cannot take the walk outside.
// fn gets absolute paths and the open root, to read files through it.
func (w *Workspace) Walk(ctx context.Context, real string, fn func(root *RootDir, p string, d fs.DirEntry) error) error {
	root, err := w.OpenRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	start := w.RelSlash(real)
	err = fs.WalkDir(beneathFS{root}, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable subdirectory should not spoil the rest
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != start && (skipNames[d.Name()] || w.Kept(filepath.Join(w.root, filepath.FromSlash(p)))) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return fn(root, filepath.Join(w.root, filepath.FromSlash(p)), d)
	})
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}
