package checkpoint

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// stampTimeout bounds the look at the work tree: a chat that cannot list
// its files quickly tells the model nothing rather than keep the person
// waiting.
const stampTimeout = 5 * time.Second

// Stamp is the work tree now, as stamps of its files: those git sees in a
// repository the session's git was opened in (once ralph's git is pinned),
// else every file under the project.
func (t *Tracker) Stamp() TreeStamp {
	ctx, cancel := context.WithTimeout(context.Background(), stampTimeout)
	defer cancel()
	if t.g != nil && t.g.repo != nil {
		t.g.waitGuarded()
		return stampGit(ctx, t.g.repo)
	}
	return stampWalk(ctx, t.root)
}

// fileStamp is what tells a file changed without reading it: its size and
// modification time (a write within the same clock tick that keeps the
// size is missed, as make would miss it).
type fileStamp struct {
	size  int64
	mtime time.Time
}

// TreeStamp is the work tree at one moment: its files by slash path
// relative to the project. nil is a tree that could not be looked at,
// which nothing is compared with.
type TreeStamp map[string]fileStamp

// stampLimit bounds the files a stamp holds: a tree larger than that is
// not compared (the chat tells nothing rather than something partial).
const stampLimit = 50000

// Changes lists the files added, changed or removed between s and now,
// sorted; none when either could not be taken.
func (s TreeStamp) Changes(now TreeStamp) []string {
	if s == nil || now == nil {
		return nil
	}
	var out []string
	for p, st := range now {
		if old, ok := s[p]; !ok || old.size != st.size || !old.mtime.Equal(st.mtime) {
			out = append(out, p)
		}
	}
	for p := range s {
		if _, ok := now[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// add stamps the file at abs as rel, reporting false once the stamp is
// full.
func (s TreeStamp) add(rel, abs string) bool {
	if len(s) >= stampLimit {
		return false
	}
	if fi, err := os.Lstat(abs); err == nil && !fi.IsDir() {
		s[rel] = fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	}
	return true
}

// stampGit stamps the files git sees under the project: tracked ones and
// untracked ones it does not ignore, so build output and dependencies
// (ignored) cost nothing. A tracked file that is gone is simply absent;
// one listed twice (a merge in conflict) is stamped once.
func stampGit(ctx context.Context, repo *git.Repo) TreeStamp {
	out, err := repo.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", repo.Prefix+".")
	if err != nil {
		return nil
	}
	prefix := strings.TrimSuffix(repo.Prefix, "/")
	s := TreeStamp{}
	for name := range bytes.SplitSeq(out, []byte{0}) {
		if len(name) == 0 {
			continue
		}
		top := string(name)
		rel := top
		if prefix != "" {
			rel = strings.TrimPrefix(top, prefix+"/")
		}
		if strings.HasPrefix(rel, memory.StateDir+"/") {
			continue
		}
		if !s.add(rel, repo.Abs(top)) {
			return nil
		}
	}
	return s
}

// stampWalk stamps every file under root but .git and .ralph, for a
// project outside git.
func stampWalk(ctx context.Context, root string) TreeStamp {
	s := TreeStamp{}
	full := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is passed over
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || d.Name() == memory.StateDir) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		if !s.add(path.Clean(filepath.ToSlash(rel)), p) {
			full = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil || full {
		return nil
	}
	return s
}
