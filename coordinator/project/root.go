package project

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory"
)

// Root finds the project a command works on. An explicit directory (-C)
// is the project itself. Otherwise ralph walks up from the working
// directory to the nearest directory holding .ralph/ — so a ralph started
// in a subdirectory meets the lock, the sessions and the configuration of
// the project it is in, instead of making a second .ralph/ there — and
// stops at the top of a git work tree, which is the project when no
// .ralph/ is found on the way; with neither, the working directory is the
// project. The walk never climbs to the filesystem root, the home
// directory or the temporary directory: a stray .ralph/ there would
// otherwise capture every directory below it.
func Root(dir string) (string, error) {
	if dir != "" {
		return explicitRoot(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot tell the working directory: %w", err)
	}
	return findRoot(wd, boundaries()), nil
}

func explicitRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project directory %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project directory %s is not a directory", dir)
	}
	return abs, nil
}

// boundaries are the directories the walk up never enters.
func boundaries() map[string]bool {
	b := map[string]bool{string(filepath.Separator): true}
	for _, d := range []string{os.TempDir(), os.Getenv("HOME")} {
		if d == "" {
			continue
		}
		b[filepath.Clean(d)] = true
		if real, err := filepath.EvalSymlinks(d); err == nil {
			b[real] = true
		}
	}
	return b
}

func findRoot(wd string, stop map[string]bool) string {
	for dir := wd; ; {
		if isDir(filepath.Join(dir, memory.StateDir)) {
			return dir
		}
		if exists(filepath.Join(dir, ".git")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir || stop[parent] {
			return wd
		}
		dir = parent
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
