//go:build unix

package workers

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory/gitcreds"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"golang.org/x/sys/unix"
)

// maskConfig returns what the file tools read in place of f, which was
// opened as rel: when f is one of a repository's configuration files
// (gitcreds.IsConfigPath, by the path the kernel says it was reached by,
// so a symbolic link to .git/config is one; or by identity, so a hard
// link to the project's own is one), a file holding gitcreds' masked
// copy, and f is closed; otherwise f itself. The model never reads the
// workflow's token or a remote's password through ralph's file tools.
func (r *RootDir) maskConfig(f *os.File, rel string, st *unix.Stat_t) (*os.File, error) {
	real := filepath.Join(r.w.root, rel)
	if p, ok := fdPath(int(f.Fd())); ok {
		real = p
	} else if p, err := evalExisting(real); err == nil {
		real = p
	}
	realRel, err := filepath.Rel(r.w.root, real)
	if err != nil {
		realRel = rel
	}
	// A file of any name may be one the configuration includes
	// (include.path = ../ci-creds.conf): a small file is looked up among
	// the repository's files, which gitcreds.Files lists with their
	// includes, by identity.
	if !gitcreds.IsConfigPath(realRel) && !(st.Size <= gitcreds.MaxConfig && r.isProjectConfig(st)) {
		return f, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, gitcreds.MaxConfig+1))
	if err != nil {
		f.Close()
		return nil, err
	}
	if len(b) > gitcreds.MaxConfig {
		// Too large to mask, and so not shown at all.
		f.Close()
		return nil, fmt.Errorf("%w: a repository configuration larger than ralph masks (4 MiB)", ErrNotRegular)
	}
	masked, secrets := gitcreds.Mask(b)
	if len(secrets) == 0 && bytes.Equal(masked, b) {
		// Nothing to mask: the file read again from the start.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	f.Close()
	return anonymousFile(masked, f.Name())
}

// isProjectConfig reports whether st is the file of one of the project
// repository's configuration files or of a file they include.
func (r *RootDir) isProjectConfig(st *unix.Stat_t) bool {
	r.configsOnce.Do(func() {
		r.configs = map[fileID]bool{}
		door, err := rootfs.New(r.w.root)
		if err != nil {
			return
		}
		defer door.Close()
		gitDir, common := gitcreds.Locate(door, filepath.Join(r.w.root, ".git"))
		for _, p := range gitcreds.Files(door, gitDir, common) {
			var c unix.Stat_t
			if unix.Stat(p, &c) == nil {
				r.configs[fileID{uint64(c.Dev), c.Ino}] = true
			}
		}
	})
	return r.configs[fileID{uint64(st.Dev), st.Ino}]
}

// anonymousFile returns an open file holding b, read from the start,
// that no path names: a memfd where the kernel has them, else a
// temporary file removed at once.
func anonymousFile(b []byte, name string) (*os.File, error) {
	f, err := newAnonymous(name)
	if err != nil {
		return nil, fmt.Errorf("mask %s: %w", name, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("mask %s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("mask %s: %w", name, err)
	}
	return f, nil
}
