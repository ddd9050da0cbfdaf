package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A linked worktree (`git worktree add`, and every task tree of `ralph run
// --worktrees`) keeps its index, HEAD and logs in an administrative
// directory inside the main repository (.git/worktrees/<id>), and its
// commits' objects and refs in the main repository's objects and refs.
// All of that lies outside the worktree, so without these the model's
// `git add` fails with "index.lock: Permission denied". They are made
// writable; the main repository's config and hooks, and the
// administrative directory's config.worktree and commondir (which git
// reads as configuration, or as where the configuration is), stay
// read-only.

// maxPointerFile is how much of a .git file or a commondir is read: a
// path to a directory, as gitcreds reads them.
const maxPointerFile = 4096

// worktreeDirs returns, for a project root that is a linked worktree,
// the directories its git needs to write, and the files in them that
// must stay read-only. A root that is not a linked worktree has none.
func worktreeDirs(root string) (write, guard []string) {
	// Read by the one small reader, as git's own pointer files are
	// elsewhere: a FIFO a command left at .git is refused, not waited on.
	b, err := rootfs.ReadSmall(rootfs.Person(), filepath.Join(root, ".git"), maxPointerFile)
	if err != nil {
		return nil, nil // a directory, or none: an ordinary repository
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil, nil
	}
	admin = strings.TrimSpace(admin)
	if !filepath.IsAbs(admin) {
		admin = filepath.Join(root, admin)
	}
	admin, err = filepath.EvalSymlinks(admin)
	if err != nil {
		return nil, nil
	}
	c, err := rootfs.ReadSmall(rootfs.Person(), filepath.Join(admin, "commondir"), maxPointerFile)
	if err != nil {
		return nil, nil // a separate git dir (git init --separate-git-dir): not a worktree
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(admin, common)
	}
	common, err = filepath.EvalSymlinks(common)
	if err != nil {
		return nil, nil
	}
	write = []string{admin}
	for _, d := range []string{"objects", "refs", "logs"} {
		if fi, err := os.Stat(filepath.Join(common, d)); err == nil && fi.IsDir() {
			write = append(write, filepath.Join(common, d))
		}
	}
	guard = []string{filepath.Join(admin, "config.worktree"), filepath.Join(admin, "commondir"), filepath.Join(admin, "gitdir"),
		// Outside the writable directories already, unless the main
		// repository lies in one (the temporary directory): then they are
		// mounted read-only like the project's own.
		filepath.Join(common, "config"), filepath.Join(common, "hooks")}
	return write, guard
}
