package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ralph-dev/ralph/memory/gitcreds"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"golang.org/x/sys/unix"
)

// A repository's configuration may hold a credential: actions/checkout
// leaves the workflow's token in .git/config as an http.extraheader, and
// clones carry https://user:token@host remotes. ralph keeps GITHUB_TOKEN
// from the commands' environment, so the same token must not come back
// through `cat .git/config` or `git config --get`. The helper binds, over
// each configuration file of the project's repositories that holds one,
// a read-only copy masked by gitcreds.Mask (the one masking the file
// tools use too). git run by a command sees the masked copy and so lacks
// the credential: a sandboxed `git push` over https asks for one, as it
// would on a machine without it. ralph's own git reads the real file.
// The Landlock-only fallback can bind nothing; there the credentials are
// redacted from what the model is sent and from ralph's records instead.

// masks returns the configuration files of the project's repositories
// that hold a credential, and a digest of their masked copies, which
// joins the spec's key so that a helper is replaced when what it would
// show changes.
func (r *Runner) masks() (paths []string, sum string) {
	// The files are read through doors that follow no link out: the
	// project's, and for a linked worktree the main repository's common
	// directory, which its .git file names.
	door, err := rootfs.New(r.policy.Root)
	if err != nil {
		return nil, ""
	}
	defer door.Close()
	doors := []*rootfs.Fs{door}
	var dirs [][2]string
	gitDir, common := gitcreds.Locate(door, filepath.Join(r.policy.Root, ".git"))
	if gitDir != "" {
		dirs = append(dirs, [2]string{gitDir, common})
		if !door.Contains(common) {
			if d, err := rootfs.New(common); err == nil {
				defer d.Close()
				doors = append(doors, d)
			}
		}
	}
	if r.repos != nil {
		dirs = append(dirs, r.repos.gitDirs(r.policy.Mode != WorkspaceWrite)...)
	}
	h := sha256.New()
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, door := range doors {
			if !door.Contains(d[0]) && !door.Contains(d[1]) {
				continue // a repository outside the project, not the worktree's own
			}
			for _, f := range gitcreds.Files(door, d[0], d[1]) {
				if seen[f] || !door.Contains(f) {
					continue
				}
				seen[f] = true
				if masked, _ := gitcreds.MaskFile(door, f); masked != nil {
					paths = append(paths, f)
					h.Write([]byte(f + "\x00"))
					h.Write(masked)
				}
			}
		}
	}
	if len(paths) == 0 {
		return nil, ""
	}
	slices.Sort(paths)
	return paths, hex.EncodeToString(h.Sum(nil))
}

// gitDirs returns the git and common directories of the repositories the
// last look found (the project's own, nested ones, submodules', linked
// worktrees'); with once, it looks itself the first time only (a
// read-only session, whose commands make no repository).
func (g *nestedGuard) gitDirs(once bool) [][2]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if once && g.resolved == nil {
		if g.real == "" {
			g.real = g.root
			if r, err := filepath.EvalSymlinks(g.root); err == nil {
				g.real = r
			}
		}
		g.pointers()
	}
	out := make([][2]string, 0, len(g.resolved))
	for _, d := range g.resolved {
		out = append(out, d)
	}
	return out
}

// mountMasked binds, over each path, a read-only copy of it masked by
// gitcreds.Mask, made in a tmpfs of the helper's own that no path names
// (the new mount API: a detached tmpfs, a clone of each file, moved onto
// the path). The path is opened without following links and the copy
// made from that very file, so a link swapped in after ralph looked
// redirects nothing. A path that vanished is skipped.
func mountMasked(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cannot make the masked copies of the repository configuration: %w", err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("cannot make the masked copies of the repository configuration: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fmt.Errorf("cannot make the masked copies of the repository configuration: %w", err)
	}
	defer unix.Close(mfd)
	var targets []int
	var names []string
	defer func() {
		for _, fd := range targets {
			unix.Close(fd)
		}
	}()
	for i, p := range paths {
		target, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot open %s: %w", p, err)
		}
		targets = append(targets, target)
		masked, err := maskedCopy(target, p)
		if err != nil {
			return err
		}
		name := strconv.Itoa(i)
		fd, err := unix.Openat(mfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return fmt.Errorf("cannot make the masked copy of %s: %w", p, err)
		}
		f := os.NewFile(uintptr(fd), name)
		_, err = f.Write(masked)
		f.Close()
		if err != nil {
			return fmt.Errorf("cannot make the masked copy of %s: %w", p, err)
		}
		names = append(names, name)
	}
	if err := unix.MountSetattr(mfd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("cannot make the masked copies read-only: %w", err)
	}
	for i, name := range names {
		tree, err := unix.OpenTree(mfd, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fmt.Errorf("cannot bind the masked copy: %w", err)
		}
		err = unix.MoveMount(tree, "", targets[i], "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(tree)
		if err != nil {
			return fmt.Errorf("cannot bind the masked copy over a repository configuration: %w", err)
		}
	}
	return nil
}

// maskedCopy reads the regular file target (an O_PATH descriptor) and
// returns its masked copy; a file too large to mask is shown empty.
func maskedCopy(target int, path string) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(target, &st); err != nil {
		return nil, fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file, which the sandbox cannot mask", path)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(target), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gitcreds.MaxConfig+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if len(b) > gitcreds.MaxConfig {
		return nil, nil
	}
	masked, _ := gitcreds.Mask(b)
	return masked, nil
}
