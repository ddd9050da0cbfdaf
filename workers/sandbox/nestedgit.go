package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/filestamp"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The sandbox keeps the project's own .git/config and hooks read-only, but
// a command may create repositories of its own anywhere it writes (`git
// init nest`, a submodule in .git/modules, a linked worktree, a .git file
// or link pointing anywhere, a commondir naming another directory), or
// write files that a repository's configuration includes. Their
// configuration names programs (core.fsmonitor, filters, pagers, aliases)
// that the person's next `git status` runs outside any sandbox. So after
// every command, the configuration of every repository in the project is
// read by git itself (git config --list --show-origin --includes, which
// follows .git files, commondir and includes exactly as the person's git
// will), and every key that runs a program and that was not there before
// the command is taken back; the model is told in the command's result.
// The person's keys, there before the first command, are never touched,
// and a file keeps its keys when it is moved (a .git moved into a
// subdirectory), since files are known by identity as well as by path.

// nestedGuard remembers the repositories of one project and the program
// keys of their configuration files as the last check saw them.
type nestedGuard struct {
	root string

	mu     sync.Mutex
	primed bool
	real   string           // root, symbolic links resolved
	dirs   map[string]int64 // the project's directories → change time
	gits   map[string]bool  // the .git entries found in the work trees
	repos  map[string]*repo // pointer (a .git entry or a git directory) → what it led to
	// resolved is what each pointer of the last look leads to: its git
	// directory and common directory.
	resolved map[string][2]string
	files    map[string]*known // configuration file → its keys when last read
	// kids are the directories of dirs by their parent directory, for
	// rescan, which counts those of a directory (subdirsKnown).
	kids map[string]map[string]bool
	// listed counts the directories rescan listed (for the tests).
	listed int
	// gen counts the looks that read a repository again or found the
	// repositories changed, so that the durable copy of what the guard
	// knows (guardrecord.go) is written again only when it changed.
	gen uint64
	// keepAside keeps a file the guard puts back, renamed beside it: the
	// check a killed ralph missed, done by the next one, cannot tell what
	// the person changed since from what the command did.
	keepAside bool
	// paths is what the last look found, for the file tools, which ask
	// it without waiting for a look under way (nestedwatch.go).
	paths     atomic.Pointer[GitPaths]
	published uint64 // gen when paths was made
}

// repo is one repository as last read.
type repo struct {
	gitDir, common string
	stamp          string   // the watched files' stat; "" to read again
	watch          []string // the files whose change makes git read others
	person         bool     // there before the first command
}

// known is one configuration file as git last read it.
type known struct {
	fi      fs.FileInfo
	program map[string]bool // "key\nvalue" of its program keys
	content []byte          // to put back; nil when it could not be read
	// id is the file's identity when fi is not at hand (read back from a
	// durable record): its device and inode.
	id [2]uint64
}

func newNestedGuard(root string) *nestedGuard { return &nestedGuard{root: root} }

// Undone is a program key a command set in a repository's configuration,
// which the sandbox took back.
type Undone struct {
	File string   // relative to the project root, or absolute outside it
	Keys []string // the keys, such as core.fsmonitor
	// Note, when set, says what the sandbox did in a sentence of its
	// own (a pointer to another repository set aside) instead.
	Note string
	// Made says the repository itself appeared since the last look: its
	// keys may have been written before it was one (a file tool wrote
	// gd/config, then a command made gd a git directory), so what made
	// the repository is named, not what wrote the key.
	Made bool
}

// maxConfig is the largest configuration file kept to be put back; a
// larger one that gains a program key loses it by git's writer instead.
const maxConfig = 64 << 20

// gitTimeout bounds the guard's use of git in one check.
const gitTimeout = 30 * time.Second

// prime records the repositories and their configuration as they are
// before the first command: they are the person's, and left alone.
func (g *nestedGuard) prime() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.primed {
		return
	}
	g.look(true)
	g.primed = true
}

// isPrimed reports whether the guard recorded the person's repositories.
func (g *nestedGuard) isPrimed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.primed
}

// check reads the repositories again and takes back what a command added.
func (g *nestedGuard) check() []Undone {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Unprimed, nothing is known to be the person's: every program key is
	// taken back.
	g.primed = true
	return g.look(false)
}

// look finds the repositories and, for each whose watched files changed,
// has git list its configuration; with person set, what it finds is
// recorded as the person's, otherwise added program keys are taken back.
func (g *nestedGuard) look(person bool) []Undone {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	if g.repos == nil {
		g.repos, g.files = map[string]*repo{}, map[string]*known{}
		g.real = g.root
		if r, err := filepath.EvalSymlinks(g.root); err == nil {
			g.real = r
		}
	}
	var undone []Undone
	seen := map[string]bool{}
	// The common directories known before this look: a .git a command
	// moved, or a second worktree of a known repository, is not new.
	knownCommon := map[string]bool{}
	for _, r := range g.repos {
		knownCommon[r.common] = true
	}
	for _, ptr := range g.pointers() {
		seen[ptr] = true
		rc, ok := g.resolved[ptr]
		if !ok {
			rc[0], rc[1] = resolveGitDir(ptr)
		}
		gitDir, common := rc[0], rc[1]
		r := g.repos[ptr]
		made := false
		if r == nil {
			if !person && common != "" && !knownCommon[common] && !g.inProject(common) {
				// A .git (or a commondir) a command wrote that leads to
				// a repository outside the project (`gitdir:
				// ~/victim/.git`) is no repository the command made: it
				// is set aside, and that repository is never marked as
				// the model's, so its hooks stay the person's.
				if u, ok := g.outside(ptr, gitDir, common); ok {
					undone = append(undone, u)
					delete(g.resolved, ptr)
					continue
				}
			}
			r = &repo{person: person}
			g.repos[ptr] = r
			g.gen++
			made = !person
			if !person && common != "" && !knownCommon[common] {
				// A repository a command made is the model's, hooks
				// and all: ralph's own commits never run them.
				_ = git.MarkModelRepository(g.real, common, "a command made "+g.rel(ptr))
			}
		}
		moved := r.gitDir != gitDir || r.common != common
		r.gitDir, r.common = gitDir, common
		watch := append([]string{ptr, filepath.Join(gitDir, "HEAD"), filepath.Join(gitDir, "commondir"),
			filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"),
			filepath.Join(common, "config"), filepath.Join(common, "config.worktree")}, r.watch...)
		if stamp := stampOf(watch); stamp != "" && stamp == r.stamp && !moved {
			continue
		}
		if moved {
			g.gen++
		}
		u, extra := g.guardRepo(ctx, ptr, r, person, moved, made)
		undone = append(undone, u...)
		r.watch = extra
		r.stamp = stampOf(append(watch[:7:7], extra...))
	}
	for ptr := range g.repos {
		if !seen[ptr] {
			delete(g.repos, ptr)
			g.gen++
		}
	}
	g.publish()
	return undone
}

// guardRepo lists one repository's configuration, takes back the program
// keys added since the last look, and returns what it did and the files
// to watch beside the usual ones: every file git read, and the targets
// of includes that do not exist yet.
func (g *nestedGuard) guardRepo(ctx context.Context, ptr string, r *repo, person, moved, made bool) ([]Undone, []string) {
	var undone []Undone
	var entries []git.ConfigEntry
	for round := 0; ; round++ {
		entries = listConfig(ctx, r)
		if person {
			break
		}
		added := g.added(entries)
		if len(added) == 0 {
			break
		}
		// Files in the project are put back, and git reads again (an
		// include taken back takes its file's keys with it); what is
		// still added then lies outside, or would not go: the pointer
		// that leads there is set aside.
		outside, took := round == 2, false
		for _, file := range slices.Sorted(maps.Keys(added)) {
			keys := added[file]
			slices.Sort(keys)
			if round == 2 || !g.inProject(file) {
				outside = true
			} else if err := g.takeBack(ctx, file, keys); err != nil {
				outside = true
			} else {
				took = true
				undone = append(undone, Undone{File: g.rel(file), Keys: keys, Made: made})
			}
		}
		if outside && !took || round == 2 {
			if u, ok := g.disable(ptr, r, moved, added); ok {
				undone = append(undone, u)
				entries = nil
			}
			break
		}
		if !took {
			break
		}
	}
	var extra []string
	for _, e := range entries {
		if !slices.Contains(extra, e.File) {
			extra = append(extra, e.File)
		}
		if git.RunsProgram(e.Key, e.Value) && strings.HasSuffix(strings.ToLower(e.Key), ".path") && strings.HasPrefix(strings.ToLower(e.Key), "include") {
			target := e.Value
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(e.File), target)
			}
			extra = append(extra, filepath.Clean(target))
		}
	}
	g.remember(entries)
	return mergeUndone(undone), extra
}

// listConfig is git's reading of a repository's configuration; when git
// refuses the repository (no HEAD yet, an unknown format) or cannot
// finish reading it (an include of a pipe nobody writes), each file it
// reads is listed on its own, its includes not followed, so that the
// include itself is seen and taken back.
func listConfig(ctx context.Context, r *repo) []git.ConfigEntry {
	if entries, err := git.ConfigFiles(ctx, r.gitDir); err == nil {
		return entries
	}
	var entries []git.ConfigEntry
	for _, f := range []string{filepath.Join(r.gitDir, "config"), filepath.Join(r.gitDir, "config.worktree"),
		filepath.Join(r.common, "config"), filepath.Join(r.common, "config.worktree")} {
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if e, err := git.ConfigFile(ctx, f); err == nil {
			entries = append(entries, e...)
		}
	}
	return entries
}

// added groups, by file, the program keys of entries that the file did
// not have when last read. A file not read before is looked for under
// another name (a moved .git keeps its files).
func (g *nestedGuard) added(entries []git.ConfigEntry) map[string][]string {
	out := map[string][]string{}
	for _, e := range entries {
		if !git.RunsProgram(e.Key, e.Value) {
			continue
		}
		k := g.knownFile(e.File)
		if k != nil && k.program[e.Key+"\n"+e.Value] {
			continue
		}
		if !slices.Contains(out[e.File], e.Key) {
			out[e.File] = append(out[e.File], e.Key)
		}
	}
	return out
}

// knownFile is what the last look saw of file: by its name, or else by
// its identity under another name.
func (g *nestedGuard) knownFile(file string) *known {
	if k := g.files[file]; k != nil {
		return k // git's writer replaces a file: its identity changes
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil
	}
	for _, k := range g.files {
		if k.fi != nil && os.SameFile(fi, k.fi) || k.fi == nil && k.id != [2]uint64{} && k.id == filestamp.ID(fi) {
			return k
		}
	}
	return nil
}

// remember records the files of entries as they are now.
func (g *nestedGuard) remember(entries []git.ConfigEntry) {
	byFile := map[string]*known{}
	for _, e := range entries {
		k := byFile[e.File]
		if k == nil {
			fi, err := os.Stat(e.File)
			if err != nil {
				continue
			}
			k = &known{fi: fi, program: map[string]bool{}}
			if fi.Mode().IsRegular() && fi.Size() <= maxConfig {
				// Not a pipe or a device, which could block the read.
				k.content, _ = os.ReadFile(e.File)
			}
			byFile[e.File] = k
		}
		if git.RunsProgram(e.Key, e.Value) {
			k.program[e.Key+"\n"+e.Value] = true
		}
	}
	for f, k := range byFile {
		if was := g.files[f]; was == nil || !maps.Equal(was.program, k.program) || !bytes.Equal(was.content, k.content) {
			g.gen++
		}
		g.files[f] = k
	}
}

// takeBack undoes what a command added to file: a file known before goes
// back to what it was, whole; a new one loses the keys, by git's own
// writer. It writes the file itself, never through a link: a link there
// is replaced (a known file) or renamed aside (a new one).
func (g *nestedGuard) takeBack(ctx context.Context, file string, keys []string) error {
	dir, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return fmt.Errorf("resolving %s: %w", file, err)
	}
	path := filepath.Join(dir, filepath.Base(file))
	if !g.inProject(path) {
		return fmt.Errorf("%s lies outside the project", path)
	}
	if k := g.knownFile(file); k != nil && k.content != nil {
		if g.keepAside {
			// A second name for the file as it is, which the rename
			// below leaves holding it.
			_ = os.Link(path, aside(path+".ralph-set-aside"))
		}
		return replaceFile(path, k.content)
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return os.Rename(path, path+".ralph-untrusted")
	}
	for _, key := range keys {
		if err := git.UnsetConfig(ctx, path, key); err != nil {
			return err
		}
	}
	return nil
}

// disable makes the repository unreachable for git when what it read
// lies outside the project, where ralph does not write: the .git file or
// link, or the commondir, that leads there is renamed aside (kept, not
// deleted). The person's own pointers, unchanged, are left alone.
func (g *nestedGuard) disable(ptr string, r *repo, moved bool, added map[string][]string) (Undone, bool) {
	if r.person && !moved {
		return Undone{}, false
	}
	var keys []string
	for _, ks := range added {
		for _, k := range ks {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	target := ""
	if fi, err := os.Lstat(ptr); err == nil && !fi.IsDir() {
		target = ptr
	} else if cd := filepath.Join(r.gitDir, "commondir"); r.common != r.gitDir {
		target = cd
	}
	if target == "" || !g.inProject(target) || ptr == filepath.Join(g.root, ".git") && r.person {
		return Undone{}, false
	}
	aside, err := renameAside(g.root, target)
	if err != nil {
		return Undone{}, false
	}
	return Undone{File: fmt.Sprintf("%s (renamed to %s: the configuration it leads to lies outside the project)", g.rel(target), filepath.Base(aside)), Keys: keys}, true
}

// outside sets aside the pointer that leads a new repository of the
// project to a common directory outside it: the .git file or link ptr, or
// the commondir of a .git directory. ok is false when there is nothing
// in the project to rename.
func (g *nestedGuard) outside(ptr, gitDir, common string) (Undone, bool) {
	target := ""
	if fi, err := os.Lstat(ptr); err == nil && !fi.IsDir() {
		target = ptr
	} else if cd := filepath.Join(gitDir, "commondir"); gitDir != common && g.inProject(cd) {
		target = cd
	}
	if target == "" || !g.inProject(target) {
		return Undone{}, false
	}
	aside, err := renameAside(g.root, target)
	if err != nil {
		return Undone{}, false
	}
	return Undone{Note: fmt.Sprintf("the sandbox renamed %s, which this command wrote, to %s: it leads to the repository %s outside the project, which ralph does not take for one of the project's",
		g.rel(target), filepath.Base(aside), common)}, true
}

// resolveGitDir is the git directory a .git entry (or a git directory)
// leads to, as git finds it: a directory or a link to one is it, a file
// names it ("gitdir: <dir>", relative to the file's directory); and the
// common directory its commondir names, or itself.
func resolveGitDir(ptr string) (gitDir, common string) {
	// A command may put a FIFO at a .git file or a commondir: read by
	// ralph's one small reader (opened without blocking, read only when
	// it is a regular file), it never hangs the guard (and ralph with it).
	read := func(path string) ([]byte, error) { return rootfs.ReadHead(rootfs.Person(), path, 1<<20) }
	gitDir = ptr
	fi, err := os.Lstat(ptr)
	link := err == nil && fi.Mode()&fs.ModeSymlink != 0
	if link {
		fi, err = os.Stat(ptr)
	}
	if err == nil && fi.Mode().IsRegular() {
		if b, err := read(ptr); err == nil {
			if dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
				dir = strings.TrimSpace(dir)
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(filepath.Dir(ptr), dir)
				}
				gitDir = dir
			}
		}
	}
	if gitDir != ptr || link || err != nil || !fi.IsDir() {
		// A directory found by the walk has no link on its way; what a
		// .git file or link names may. A .git link to a directory is
		// the directory it names (sub/.git -> ~/victim/.git is the
		// victim's repository, which lies outside the project), as
		// for a .git file.
		if real, err := filepath.EvalSymlinks(gitDir); err == nil {
			gitDir = real
		}
	}
	common = gitDir
	if b, err := read(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		if real, err := filepath.EvalSymlinks(c); err == nil {
			c = real
		}
		common = filepath.Clean(c)
	}
	return gitDir, common
}

// stampOf is the watched files' identity, size and times, or "" when one
// changed so recently that another change in the same clock tick could
// go unseen (see settled).
func stampOf(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p)
		fi, err := os.Lstat(p)
		infos := []fs.FileInfo{fi}
		if err != nil {
			infos = nil
			b.WriteString(" -")
		} else if fi.Mode()&fs.ModeSymlink != 0 {
			// A link: what it names counts too.
			if target, err := os.Stat(p); err == nil {
				infos = append(infos, target)
			} else {
				b.WriteString(" -")
			}
		}
		for _, fi := range infos {
			if fi.IsDir() {
				// A directory's times change with every lock file git
				// makes in it; what matters in it is watched itself.
				b.WriteString(" d")
				continue
			}
			c := filestamp.Change(fi)
			if settled(c) < 0 {
				return ""
			}
			fmt.Fprintf(&b, " %d/%d/%d/%v", fi.Size(), fi.ModTime().UnixNano(), c, fi.Mode())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (g *nestedGuard) inProject(path string) bool {
	return within(g.root, filepath.Clean(path)) || within(g.real, filepath.Clean(path))
}

func (g *nestedGuard) rel(path string) string {
	for _, base := range []string{g.root, g.real} {
		if within(base, path) {
			if rel, err := filepath.Rel(base, path); err == nil {
				return rel
			}
		}
	}
	return path
}

// mergeUndone joins the reports of one file.
func mergeUndone(us []Undone) []Undone {
	var out []Undone
	for _, u := range us {
		i := slices.IndexFunc(out, func(o Undone) bool { return o.File == u.File })
		if i < 0 {
			out = append(out, u)
			continue
		}
		for _, k := range u.Keys {
			if !slices.Contains(out[i].Keys, k) {
				out[i].Keys = append(out[i].Keys, k)
			}
		}
		out[i].Made = out[i].Made || u.Made
	}
	return out
}

// replaceFile writes data over path by renaming a new file into place,
// so that the file is never seen half written, keeping its mode. A link
// or a device there is replaced, not written through.
func replaceFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	tmp := path + ".ralph-undo"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("putting back %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("putting back %s: %w", path, err)
	}
	return nil
}
