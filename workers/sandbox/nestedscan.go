package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-dev/ralph/memory/filestamp"
)

// pointers lists what leads git to a repository in the project: the
// project's own .git, every .git entry (directory, file or link) in its
// work trees, and in every git directory the submodules' repositories
// (modules/**) and the linked worktrees' administrative directories.
//
// It runs after every command, so it does not read every directory of a
// large project each time: it remembers the directories and their change
// times (ctime, which no command can set back, unlike mtime), and reads
// again only those whose entries changed. A repository made anywhere adds
// .git to some directory and so changes that directory.
func (g *nestedGuard) pointers() []string {
	topGit := filepath.Join(g.root, ".git")
	if g.dirs == nil {
		g.dirs, g.kids, g.gits = map[string]int64{}, map[string]map[string]bool{}, map[string]bool{}
		g.scan(g.root)
	} else {
		for dir, was := range g.dirs {
			fi, err := os.Lstat(dir)
			if err != nil || !fi.IsDir() {
				g.dropDir(dir)
				continue
			}
			if now := filestamp.Change(fi); now != was {
				g.dirs[dir] = settled(now)
				g.rescan(dir, fi)
			}
		}
	}
	g.resolved = map[string][2]string{}
	var out []string
	if _, err := os.Lstat(topGit); err == nil {
		out = append(out, topGit)
	}
	for path := range g.gits {
		if _, err := os.Lstat(path); err != nil {
			delete(g.gits, path)
			continue
		}
		out = append(out, path)
	}
	commons := map[string]bool{}
	for _, ptr := range out {
		gitDir, common := resolveGitDir(ptr)
		commons[gitDir], commons[common] = true, true
		g.resolved[ptr] = [2]string{gitDir, common}
	}
	for gd := range commons {
		if !g.inProject(gd) {
			// Another worktree's or submodule of a repository outside
			// is not reached from the project.
			continue
		}
		filepath.WalkDir(filepath.Join(gd, "modules"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			switch d.Name() {
			case "objects", "refs", "logs", "hooks", "info":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "config")); err == nil {
				out = append(out, path)
			}
			return nil
		})
		if entries, err := os.ReadDir(filepath.Join(gd, "worktrees")); err == nil {
			for _, e := range entries {
				if e.IsDir() {
					out = append(out, filepath.Join(gd, "worktrees", e.Name()))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// settled is a change time to remember, or -1 when it is so recent that
// another change in the same clock tick would leave it as it is: file
// times come from a coarse clock (a few milliseconds), and a command that
// starts right after the look could add .git within the same tick. A
// directory remembered as -1 is read again at the next look.
func settled(stamp int64) int64 {
	if d := time.Now().UnixNano() - stamp; d < int64(time.Second) && d > -int64(time.Second) {
		return -1
	}
	return stamp
}

// scan records dir and every directory below it, and the .git entries
// found, not descending into ralph's state or any git directory.
func (g *nestedGuard) scan(dir string) {
	topGit, state := filepath.Join(g.root, ".git"), filepath.Join(g.root, ".ralph")
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if path == topGit || path == state {
			return filepath.SkipDir // the read-only mounts' to keep
		}
		if d.Name() == ".git" {
			g.gits[path] = true
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "HEAD" && !d.IsDir() && g.bareGitDir(filepath.Dir(path)) {
			// The rest of a git directory no .git names is not walked.
			return filepath.SkipDir
		}
		if d.IsDir() {
			if fi, err := d.Info(); err == nil {
				g.addDir(path, settled(filestamp.Change(fi)))
			}
		}
		return nil
	})
}

// addDir records the directory path with its change stamp, and as a
// subdirectory of its parent (subdirsKnown).
func (g *nestedGuard) addDir(path string, stamp int64) {
	g.dirs[path] = stamp
	parent := filepath.Dir(path)
	if g.kids[parent] == nil {
		g.kids[parent] = map[string]bool{}
	}
	g.kids[parent][path] = true
}

// dropDir forgets the directory path, which is gone.
func (g *nestedGuard) dropDir(path string) {
	delete(g.dirs, path)
	parent := filepath.Dir(path)
	if kids := g.kids[parent]; kids != nil {
		delete(kids, path)
		if len(kids) == 0 {
			delete(g.kids, parent)
		}
	}
}

// rescan reads a directory whose entries changed (fi is its Lstat, taken
// before): a new .git in it, or a new directory below it, which is
// scanned whole. Where the directory's link count tells that every
// directory in it is one known already (subdirsKnown), only its .git is
// looked up; otherwise the directory is listed.
func (g *nestedGuard) rescan(dir string, fi fs.FileInfo) {
	topGit, state := filepath.Join(g.root, ".git"), filepath.Join(g.root, ".ralph")
	if g.subdirsKnown(dir, fi) {
		if git := filepath.Join(dir, ".git"); git != topGit {
			if _, err := os.Lstat(git); err == nil {
				g.gits[git] = true
			}
		}
		// A directory becomes a git directory with files alone (HEAD and
		// a commondir, a linked worktree's), which no link count shows.
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
			g.bareGitDir(dir)
		}
		return
	}
	g.listed++
	_ = listDir(dir, func(name string, isDir bool) {
		path := filepath.Join(dir, name)
		switch {
		case path == topGit || path == state:
		case name == ".git":
			g.gits[path] = true
		case name == "HEAD" && !isDir:
			g.bareGitDir(dir)
		case isDir:
			if _, known := g.dirs[path]; !known {
				g.scan(path)
			}
		}
	})
}

// subdirsKnown reports whether every directory in dir (whose Lstat, taken
// before anything else of this look's reading of it, is fi) is one that
// rescan does not need to scan: one recorded already, its .git, or at
// the top ralph's state. A task loop whose tasks each add a file at the
// project's top had the guard list that directory after every step, at
// a cost that grew with the files in it (issue 94: 0.33 ms a step at the
// start of a 10,000-task run, 0.75 ms at its end); a directory's link
// count is two plus the directories in it, on the file systems that keep
// it so (dirLinks), so the directories in dir are all known when as many
// of the known ones are there.
//
// The count and the lookups are not one atomic reading: the directory's
// identity and change time are read again after them, and anything that
// changed it meanwhile sends it to the listing. A change within the
// same clock tick as fi's change time leaves that time as it is, but such
// a time is recent, and a recent time is remembered as "read again at
// the next look" (settled), which reads it again then.
func (g *nestedGuard) subdirsKnown(dir string, fi fs.FileInfo) bool {
	want, ok := dirLinks(dir, fi)
	if !ok {
		return false
	}
	isDir := func(path string) bool {
		st, err := os.Lstat(path)
		return err == nil && st.IsDir()
	}
	n := 0
	for kid := range g.kids[dir] {
		if isDir(kid) {
			n++
		}
	}
	// The directories scan never records: any .git (a git directory is
	// not walked), and ralph's state at the top.
	if isDir(filepath.Join(dir, ".git")) {
		n++
	}
	if dir == g.root && isDir(filepath.Join(g.root, ".ralph")) {
		n++
	}
	if n != want {
		return false
	}
	again, err := os.Lstat(dir)
	return err == nil && again.IsDir() && os.SameFile(fi, again) && filestamp.Change(again) == filestamp.Change(fi)
}

// bareGitDir records dir as a repository when git takes it for a git
// directory (HEAD beside objects or a commondir) although no .git names
// it: `git init --bare gd` with core.worktree set, whose configuration
// the person's git reads in gd as any other repository's, so its keys
// are the guard's to check as well. The project's top is not one.
func (g *nestedGuard) bareGitDir(dir string) bool {
	if dir == g.root || !isGitDirectory(dir) {
		return false
	}
	g.gits[dir] = true
	return true
}

// isGitDirectory reports whether dir holds what makes git take a
// directory for a git directory: HEAD, and an objects directory or a
// commondir (as workers.looksLikeGitDir decides for the file tools).
func isGitDirectory(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if fi, err := os.Stat(filepath.Join(dir, "objects")); err == nil && fi.IsDir() {
		return true
	}
	_, err := os.Lstat(filepath.Join(dir, "commondir"))
	return err == nil
}
