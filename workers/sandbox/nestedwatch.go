package sandbox

import "path/filepath"

// The nested guard takes back, after a step, a program key that appeared
// in a repository's configuration; ralph's file tools refuse to write
// those files in the first place, as they refuse .git: a git directory
// can have any name (git init --separate-git-dir=gd sub, a sub/.git link
// to ../gd, a commondir), and a configuration can include any file of
// the tree. So each look publishes what it found, and the file tools ask
// it (workers.Workspace's git-directory check) without waiting for a look
// under way.

// GitPaths is what the nested guard's last look found in the project:
// every git directory and common directory of its repositories, and every
// file git read as their configuration (includes too) or would read once
// it exists (an include's target); real paths, links resolved.
type GitPaths struct {
	Dirs  map[string]bool
	Files map[string]bool
}

// Dir is the git directory that holds path, or "" when none does.
func (p *GitPaths) Dir(path string) string {
	if p == nil {
		return ""
	}
	for d := path; ; {
		if p.Dirs[d] {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// publish makes what the guard knows now its published GitPaths, when
// it changed (every change of a repository or of its configuration
// counts in gen); the caller holds mu.
func (g *nestedGuard) publish() {
	if g.paths.Load() != nil && g.published == g.gen {
		return
	}
	g.published = g.gen
	p := &GitPaths{Dirs: map[string]bool{}, Files: map[string]bool{}}
	add := func(m map[string]bool, path string) {
		if path == "" {
			return
		}
		path = filepath.Clean(path)
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		} else if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
			// An include's target that does not exist yet.
			path = filepath.Join(dir, filepath.Base(path))
		}
		if g.inProject(path) {
			m[path] = true
		}
	}
	for _, r := range g.repos {
		add(p.Dirs, r.gitDir)
		add(p.Dirs, r.common)
		for _, f := range r.watch {
			add(p.Files, f)
		}
	}
	for f := range g.files {
		add(p.Files, f)
	}
	g.paths.Store(p)
}

// Paths is what the guard's last look found, nil before its first.
func (g *nestedGuard) Paths() *GitPaths {
	if g == nil {
		return nil
	}
	return g.paths.Load()
}
