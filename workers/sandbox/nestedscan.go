package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
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
		g.dirs, g.gits = map[string]int64{}, map[string]bool{}
		g.scan(g.root)
	} else {
		for dir, was := range g.dirs {
			fi, err := os.Lstat(dir)
			if err != nil || !fi.IsDir() {
				delete(g.dirs, dir)
				continue
			}
			if now := changeStamp(fi); now != was {
				g.dirs[dir] = settled(now)
				g.rescan(dir)
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
		if d.IsDir() {
			if fi, err := d.Info(); err == nil {
				g.dirs[path] = settled(changeStamp(fi))
			}
		}
		return nil
	})
}

// rescan reads a directory whose entries changed: a new .git in it, or a
// new directory below it, which is scanned whole.
func (g *nestedGuard) rescan(dir string) {
	topGit, state := filepath.Join(g.root, ".git"), filepath.Join(g.root, ".ralph")
	_ = listDir(dir, func(name string, isDir bool) {
		path := filepath.Join(dir, name)
		switch {
		case path == topGit || path == state:
		case name == ".git":
			g.gits[path] = true
		case isDir:
			if _, known := g.dirs[path]; !known {
				g.scan(path)
			}
		}
	})
}
