//go:build linux

package sandbox

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/ralph-dev/ralph/memory"
)

// Where the kernel lets no unprivileged process make a user namespace
// (Ubuntu 24.04's AppArmor default, kernel.apparmor_restrict_unprivileged_userns=1,
// and many containers), the helper cannot mount the protected paths
// read-only, and Landlock alone cannot take back a sub-path of the
// writable project. Rather than push the person to run with no sandbox at
// all, workspace-write then runs on Landlock alone and keeps the
// protected paths by checking them after every command: what a command
// changed under .git/hooks, .git/config (and the files like it) and
// .ralph/config.toml is put back as it was, what it created there is
// removed, and a .git directory moved aside is moved back. That is weaker
// than a read-only mount — a program the command left running in the
// background could act before the check, and the person's own git could
// run a hook in the moment between — which is why ralph says so once.
// A ralph killed while the command runs (SIGKILL, a lost power) never
// checks: the record taken at the command's start is written outside
// the project first (guardrecord.go), and the next ralph in the project
// does the check before its own git runs, setting aside what it
// replaces, and says so in one line.

// guardedFiles are the paths under the root that the Landlock-only
// sandbox restores, beside protectedNames' git paths: .ralph as a whole
// is ralph's to write while commands run, so only its configuration,
// which holds the allowed commands, is guarded, and its .gitignore, which
// git opens at every status and would wait on for ever were it a FIFO.
var guardedFiles = []string{".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree", ".ralph/config.toml", ".ralph/.gitignore"}

// guardedState is the Landlock-only sandbox's record of the guarded
// paths. The record is taken when a command starts while none runs, and
// kept while any does: a command that starts after another changed a
// hook must not make the changed hook the one to restore.
type guardedState struct {
	root  string
	paths []string // absolute

	mu      sync.Mutex
	running int
	base    map[string]entry // path → what it was; absent paths have none
	gitIno  uint64
	// home is the record of the last .git seen in place: a command that
	// took .git away, in one command or across two, and put it (or a
	// copy) back, brings back the person's hooks and configuration, which
	// are compared with this record and never deleted.
	home map[string]entry
	// gen counts the records that differed from the one before, so that
	// the durable copy of the record (guardrecord.go) is written again
	// only when it changed.
	gen uint64
	// setAside keeps what is replaced or removed, renamed beside it:
	// the check a killed ralph missed, done by the next one, cannot tell
	// what the person changed since from what the command did.
	setAside bool
}

// entry is one file, directory or link as recorded.
type entry struct {
	mode fs.FileMode
	data []byte // a file's content, a link's target
}

func newGuardedState(root string, extra []string) *guardedState {
	g := &guardedState{root: root}
	for _, name := range guardedFiles {
		g.paths = append(g.paths, filepath.Join(root, name))
	}
	g.paths = append(g.paths, extra...)
	// ralph saves "always" answers to .ralph/config.toml while commands
	// run; what it wrote there is its own, not a command's to undo.
	memory.WatchOwnWrites(g.paths...)
	return g
}

// begin is called before a command starts.
func (g *guardedState) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == 0 {
		was, wasIno := g.base, g.gitIno
		g.base = map[string]entry{}
		for _, p := range g.paths {
			record(p, g.base)
		}
		g.gitIno = inode(filepath.Join(g.root, ".git"))
		if g.gitIno != 0 {
			g.home = g.base
		}
		if g.gitIno != wasIno || !sameEntries(was, g.base) {
			g.gen++
		}
	}
	g.running++
}

// end is called once a command has finished; it puts the guarded paths
// back and returns those it had to, relative to the root.
func (g *guardedState) end() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	var restored []string
	note := func(p string) {
		rel, _ := filepath.Rel(g.root, p)
		restored = append(restored, rel)
	}
	gitDir := filepath.Join(g.root, ".git")
	base, sure := g.base, true
	if cur := inode(gitDir); cur != g.gitIno {
		// .git was moved aside (and perhaps another made): the one ralph
		// knew is looked for in the project and moved back; what was in
		// its place is kept beside it.
		found := ""
		if g.gitIno != 0 {
			found = g.findInode(g.gitIno)
		}
		switch {
		case found != "":
			if _, err := os.Lstat(gitDir); err == nil {
				os.Rename(gitDir, aside(gitDir+".replaced-by-a-command"))
			}
			if os.Rename(found, gitDir) == nil {
				note(gitDir)
			}
		default:
			// A .git that ralph did not record at this command's start:
			// perhaps the person's, moved back (or copied back, with new
			// inodes) after an earlier command or session took it away.
			// It is compared with the last record of the person's, and
			// nothing in it is deleted: what differs is set aside.
			sure = false
			if cur != 0 && g.home != nil {
				base = g.home
			}
		}
	}
	for _, p := range g.paths {
		now := map[string]entry{}
		record(p, now)
		// Removed what the command created, deepest first.
		var extra []string
		for q, is := range now {
			if _, ok := base[q]; ok {
				continue
			}
			if is.mode.IsRegular() && memory.WroteLast(q, is.data) {
				base[q] = is // ralph created it since the record
				continue
			}
			extra = append(extra, q)
		}
		slices.Sort(extra)
		if !sure {
			extra = unsure(extra)
		} else if g.setAside {
			extra = topmost(extra)
		}
		for i := len(extra) - 1; i >= 0; i-- {
			if remove(extra[i], sure && !g.setAside) == nil {
				note(extra[i])
			}
		}
		// Put back what it changed or removed, parents first.
		for _, q := range slices.Sorted(maps.Keys(base)) {
			was := base[q]
			if !within(p, q) {
				continue
			}
			is, ok := now[q]
			if ok && is.mode == was.mode && bytes.Equal(is.data, was.data) {
				continue
			} else if ok && is.mode.IsRegular() && memory.WroteLast(q, is.data) {
				base[q] = is // ralph's own write since the record
				continue
			}
			if ok && (!sure || g.setAside) && !is.mode.IsDir() {
				os.Rename(q, aside(q+".ralph-set-aside"))
			}
			if put(q, was) == nil {
				note(q)
			}
		}
	}
	return dedupe(restored)
}

// sameEntries reports whether two records hold the same paths as the
// same files, directories and links.
func sameEntries(a, b map[string]entry) bool {
	if len(a) != len(b) {
		return false
	}
	for p, x := range a {
		y, ok := b[p]
		if !ok || x.mode != y.mode || !bytes.Equal(x.data, y.data) {
			return false
		}
	}
	return true
}

// unsure narrows what to set aside in a .git that may be the person's:
// only the topmost of what is new (a directory goes aside whole), and
// never the configuration, which stays where the person's git reads it:
// the program keys in it, if the command set any, are the nested
// repositories' guard's to take back (nestedgit.go), key by key.
func unsure(extra []string) []string {
	var out []string
	for _, q := range extra {
		switch filepath.Base(q) {
		case "config", "config.worktree":
			if filepath.Base(filepath.Dir(q)) == ".git" {
				continue
			}
		}
		out = append(out, q)
	}
	return topmost(out)
}

// topmost drops from the sorted paths those that lie under another: a
// directory set aside goes whole.
func topmost(paths []string) []string {
	var out []string
	for _, q := range paths {
		if slices.ContainsFunc(out, func(o string) bool { return within(o, q) }) {
			continue
		}
		out = append(out, q)
	}
	return out
}

// remove takes away what a command created under a guarded path: deleted
// when it lies in the .git recorded at the command's start, and so can
// only be the command's; set aside (renamed, where git does not look for
// it) when the .git is another, which may be the person's moved back.
func remove(path string, sure bool) error {
	if sure {
		return os.RemoveAll(path)
	}
	return os.Rename(path, aside(path+".ralph-set-aside"))
}

// findInode looks for the directory with inode ino in the project, where
// `mv .git .git-old` or `mv .git sub/.git` leaves it: the root's entries
// and the directories a few levels below (a rename keeps the inode). It
// runs only when .git is not the one recorded.
func (g *guardedState) findInode(ino uint64) string {
	const depth = 4
	found := ""
	filepath.WalkDir(g.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if !d.IsDir() || p == g.root {
			return nil
		}
		if inode(p) == ino {
			found = p
			return filepath.SkipAll
		}
		if d.Name() == ".git" || d.Name() == ".ralph" || strings.Count(p[len(g.root):], string(filepath.Separator)) >= depth {
			return filepath.SkipDir
		}
		return nil
	})
	return found
}

func inode(path string) uint64 {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// record adds path, and everything under it when it is a directory, to m.
func record(path string, m map[string]entry) {
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		e := entry{mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			e.data = []byte(t)
		case fi.Mode().IsRegular():
			e.data, _ = os.ReadFile(p)
		}
		m[p] = e
		return nil
	})
}

// put makes path what e recorded, replacing whatever is there.
func put(path string, e entry) error {
	switch {
	case e.mode.IsDir():
		if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
			os.Remove(path)
		}
		if err := os.Mkdir(path, e.mode.Perm()); err != nil && !os.IsExist(err) {
			return err
		}
		return os.Chmod(path, e.mode.Perm())
	case e.mode&fs.ModeSymlink != 0:
		os.RemoveAll(path)
		return os.Symlink(string(e.data), path)
	default:
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			os.RemoveAll(path)
		}
		tmp := path + ".ralph-restore"
		if err := os.WriteFile(tmp, e.data, e.mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(tmp, e.mode.Perm()); err != nil {
			os.Remove(tmp)
			return err
		}
		return os.Rename(tmp, path)
	}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
