//go:build !linux

package git

import (
	"os"
	"path/filepath"
)

// statter lstat's paths by name where ralph does not read the stat data
// git keeps: its stats are not exact, and Unchanged proves nothing (the
// undo looks at the whole tree).
type statter struct{ top string }

func newStatter(top string) *statter { return &statter{top: top} }

func (s *statter) lstat(p string) (pathStat, error) {
	fi, err := os.Lstat(filepath.Join(s.top, filepath.FromSlash(p)))
	if err != nil {
		return pathStat{}, err
	}
	ps := pathStat{size: fi.Size()}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		ps.mode = 0o120000
	case fi.Mode().IsRegular() && fi.Mode()&0o100 != 0:
		ps.mode = 0o100755
	case fi.Mode().IsRegular():
		ps.mode = 0o100644
	}
	return ps, nil
}

// lstatAll is lstat of each of paths, in order.
func (s *statter) lstatAll(paths []string) ([]pathStat, []error) {
	stats, errs := make([]pathStat, len(paths)), make([]error, len(paths))
	for i, p := range paths {
		stats[i], errs[i] = s.lstat(p)
	}
	return stats, errs
}

func (s *statter) close() {}
