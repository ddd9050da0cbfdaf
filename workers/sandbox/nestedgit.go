package sandbox

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The sandbox keeps the project's own .git/config and hooks read-only, but
// a command may create repositories of its own anywhere it writes: `git
// init nest`, a submodule cloned into .git/modules, a linked worktree's
// config.worktree. Their configuration names programs (core.fsmonitor,
// hooks, filter drivers, pagers, aliases) that the person's next `git
// status` in the project runs, outside any sandbox, by recursing into the
// nested repository. ralph's own git never recurses (memory/git), but the
// person's does. So after every command, the configuration files of
// nested repositories are found and read, and a key that runs a program,
// set by the command, is undone: the file goes back to what it was, or,
// when the command created it, loses those keys. The model is told in the
// command's result and the person sees that result.

// programKey reports whether a git configuration key (section, optional
// subsection, name; all but the subsection compared in lower case) names
// a program that git runs, or a file that could name one (include).
func programKey(section, sub, name string) bool {
	switch section {
	case "core":
		switch name {
		case "fsmonitor", "hookspath", "sshcommand", "gitproxy", "pager", "editor", "askpass", "alternaterefscommand", "worktree":
			return true
		}
	case "sequence":
		return name == "editor"
	case "pager", "alias", "include", "includeif":
		return true
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "external" || name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "mergetool", "difftool", "browser", "man":
		return name == "cmd" || name == "path"
	case "credential":
		return name == "helper"
	case "gpg":
		return name == "program"
	case "uploadpack":
		return name == "packobjectshook"
	case "remote":
		return name == "uploadpack" || name == "receivepack" || name == "vcs"
	case "submodule":
		return name == "update"
	case "tar":
		return name == "command"
	case "web":
		return name == "browser"
	case "sendemail":
		return true
	}
	return false
}

// configLine is one line of a git configuration file, with the key it
// sets ("" for section headers, comments and blank lines).
type configLine struct {
	text    string
	program bool // sets a key that runs a program (or continues one)
	key     string
}

// parseConfig splits a git configuration file into lines and marks the
// ones that set program keys. It errs on the side of marking: a value
// continued with a trailing backslash is marked with its key.
func parseConfig(data []byte) []configLine {
	var lines []configLine
	section, sub := "", ""
	continued := false
	prevProgram, prevKey := false, ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		text := sc.Text()
		if continued {
			lines = append(lines, configLine{text: text, program: prevProgram, key: prevKey})
			continued = strings.HasSuffix(text, "\\")
			continue
		}
		t := strings.TrimSpace(text)
		l := configLine{text: text}
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
		case t[0] == '[':
			end := strings.IndexByte(t, ']')
			if end < 0 {
				end = len(t)
			}
			head := t[1:end]
			rest := strings.TrimSpace(t[min(end+1, len(t)):])
			section, sub = head, ""
			if i := strings.IndexAny(head, " \t"); i >= 0 {
				section, sub = head[:i], strings.Trim(strings.TrimSpace(head[i:]), `"`)
			} else if i := strings.IndexByte(head, '.'); i >= 0 {
				section, sub = head[:i], head[i+1:]
			}
			section = strings.ToLower(section)
			// "[core] fsmonitor = x" sets a key on the header's line.
			if rest != "" && rest[0] != '#' && rest[0] != ';' {
				name, _, _ := strings.Cut(rest, "=")
				name = strings.ToLower(strings.TrimSpace(name))
				l.program, l.key = programKey(section, sub, name), keyName(section, sub, name)
				continued = strings.HasSuffix(t, "\\")
			}
		default:
			name, _, _ := strings.Cut(t, "=")
			name = strings.ToLower(strings.TrimSpace(name))
			l.program, l.key = programKey(section, sub, name), keyName(section, sub, name)
			continued = strings.HasSuffix(t, "\\")
		}
		prevProgram, prevKey = l.program, l.key
		lines = append(lines, l)
	}
	return lines
}

func keyName(section, sub, name string) string {
	if sub != "" {
		return section + "." + sub + "." + name
	}
	return section + "." + name
}

// programLines maps each line of a configuration file that sets a
// program key, white space folded, to its key.
func programLines(data []byte) map[string]string {
	m := map[string]string{}
	for _, l := range parseConfig(data) {
		if l.program {
			m[strings.Join(strings.Fields(l.text), " ")] = l.key
		}
	}
	return m
}

// addedKeys lists, once each and in order, the keys of the program lines
// that now has and old (nil for a new file) lacks.
func addedKeys(now, old []byte) []string {
	had := programLines(old)
	var keys []string
	for _, l := range parseConfig(now) {
		if !l.program {
			continue
		}
		if _, ok := had[strings.Join(strings.Fields(l.text), " ")]; ok {
			continue
		}
		if !slices.Contains(keys, l.key) {
			keys = append(keys, l.key)
		}
	}
	return keys
}

// withoutProgramKeys is the configuration file without its program keys.
func withoutProgramKeys(data []byte) []byte {
	var b bytes.Buffer
	for _, l := range parseConfig(data) {
		if !l.program {
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// nestedGuard remembers the nested repositories' configuration files of
// one project as the last check saw them.
type nestedGuard struct {
	root string

	mu    sync.Mutex
	known map[string][]byte // path → content; nil until the first look
	dirs  map[string]int64  // the project's directories → change time
	gits  map[string]bool   // the nested .git entries found
}

func newNestedGuard(root string) *nestedGuard { return &nestedGuard{root: root} }

// Undone is a program key a command set in a nested repository's
// configuration, which the sandbox took back.
type Undone struct {
	File string   // relative to the project root
	Keys []string // the keys, such as core.fsmonitor
}

// prime records the configuration files as they are before the first
// command, so that the person's own nested repositories are left alone.
func (g *nestedGuard) prime() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known != nil {
		return
	}
	g.known = map[string][]byte{}
	for _, p := range g.find() {
		if b, err := os.ReadFile(p); err == nil {
			g.known[p] = b
		}
	}
}

// check finds the configuration files again and undoes what a command
// did to them: a changed file that gained program keys goes back to its
// old content; a new file loses its program keys.
func (g *nestedGuard) check() []Undone {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known == nil {
		g.known = map[string][]byte{}
	}
	var undone []Undone
	for _, p := range g.find() {
		now, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		old, seen := g.known[p]
		if seen && bytes.Equal(old, now) {
			continue
		}
		keys := addedKeys(now, old)
		if len(keys) == 0 {
			g.known[p] = now
			continue
		}
		fixed := withoutProgramKeys(now)
		if seen {
			fixed = old
		}
		if err := replaceFile(p, fixed); err != nil {
			continue
		}
		g.known[p] = fixed
		rel, _ := filepath.Rel(g.root, p)
		undone = append(undone, Undone{File: rel, Keys: keys})
	}
	return undone
}

// replaceFile writes data over path by renaming a new file into place,
// so that the file is never seen half written, keeping its mode.
func replaceFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			// A link or a device: take it away rather than write
			// through it.
			return os.Remove(path)
		}
		mode = fi.Mode().Perm()
	}
	tmp := path + ".ralph-undo"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// find lists the configuration files git reads in the project's nested
// repositories: each nested .git directory's config, the repository a
// nested .git file points to (when it lies in the project), and in every
// git directory (the project's own included) the submodules'
// modules/**/config and the linked worktrees' config.worktree. The
// project's own .git/config is the read-only mount's to keep.
//
// It runs after every command, so it does not read every directory of a
// large project each time: it remembers the directories and their change
// times (ctime, which no command can set back, unlike mtime), and reads
// again only those whose entries changed. A repository made anywhere adds
// .git to some directory and so changes that directory.
func (g *nestedGuard) find() []string {
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
	var out []string
	gitDirs := []string{}
	if fi, err := os.Stat(topGit); err == nil && fi.IsDir() {
		gitDirs = append(gitDirs, topGit)
	}
	for path := range g.gits {
		fi, err := os.Lstat(path)
		if err != nil {
			delete(g.gits, path)
			continue
		}
		if fi.IsDir() {
			gitDirs = append(gitDirs, path)
			out = append(out, filepath.Join(path, "config"))
			continue
		}
		// A .git file: "gitdir: <dir>", relative to the file's directory.
		if b, err := os.ReadFile(path); err == nil {
			if dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
				dir = strings.TrimSpace(dir)
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(filepath.Dir(path), dir)
				}
				if within(g.root, filepath.Clean(dir)) && !within(topGit, filepath.Clean(dir)) {
					out = append(out, filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"))
				}
			}
		}
	}
	for _, gd := range gitDirs {
		filepath.WalkDir(filepath.Join(gd, "modules"), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == "objects" || d.Name() == "refs" || d.Name() == "logs" || d.Name() == "hooks") {
				return filepath.SkipDir
			}
			if !d.IsDir() && (d.Name() == "config" || d.Name() == "config.worktree") {
				out = append(out, path)
			}
			return nil
		})
		if entries, err := os.ReadDir(filepath.Join(gd, "worktrees")); err == nil {
			for _, e := range entries {
				out = append(out, filepath.Join(gd, "worktrees", e.Name(), "config.worktree"))
			}
		}
	}
	var exist []string
	for _, p := range out {
		if _, err := os.Lstat(p); err == nil {
			exist = append(exist, p)
		}
	}
	slices.Sort(exist)
	return exist
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	topGit, state := filepath.Join(g.root, ".git"), filepath.Join(g.root, ".ralph")
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case path == topGit || path == state:
		case e.Name() == ".git":
			g.gits[path] = true
		case e.IsDir():
			if _, known := g.dirs[path]; !known {
				g.scan(path)
			}
		}
	}
}
