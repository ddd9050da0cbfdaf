package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/filestamp"
)

// trust.go decides which configuration ralph's own git may take programs
// from. ralph's git runs outside the sandbox with the person's rights,
// and git runs programs that its configuration names (filters, textconv,
// merge drivers, fsmonitor, hooks, transports, signing). The model can
// write some of the files git reads as configuration: the config of a
// repository it created, a tracked file the person's config includes, a
// copy of the common directory that a rewritten .git/commondir names.
// So the decision is made from git's own reading of its configuration
// (git config --list --show-origin --show-scope --includes), never from
// a parser of ours, and every program-running key that comes from a file
// the model could have written is neutralised with -c on the command
// line, which wins over every file.

// listConfig is git's own reading of the configuration ralph's git sees
// in dir with env, includes followed, with each key's scope. git config
// runs no program: it reads files only (verified by
// TestConfigListingRunsNothing).
func listConfig(ctx context.Context, dir string, env []string) ([]ConfigEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := []string{"config", "--list", "--show-origin", "--show-scope", "--includes", "-z"}
	cmd := bare(ctx, dir, env, false, false, nil, args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := outputWatched(cmd)
	if err != nil {
		return nil, commandError(ctx, Timeout, args, stderr.String(), err)
	}
	return parseList(out, true, dir), nil
}

// neutraliser says what takes a program-running key out of ralph's git.
type neutraliser struct {
	config []string // -c settings
	diff   bool     // porcelain diffs need --no-ext-diff --no-textconv
	hooks  bool     // the hooks directory is not the person's
}

// programKey reports whether key names a program that git runs, and
// how ralph's git goes without it. An empty command is no filter (checked
// by TestEmptyFilterRunsNothing); an empty textconv, external diff or
// merge driver would fail the command instead, so diffs are run with
// --no-ext-diff --no-textconv and a merge driver becomes false (a
// conflict). Keys that only commands ralph never runs read (aliases,
// mergetool, difftool, browser, submodule update) are left: git's
// builtins cannot be aliased.
func programKey(key, value string) (neutraliser, bool) {
	if !RunsProgram(key, value) {
		// RunsProgram is the one list of such keys; this says only how
		// ralph's git goes without those of them it could meet.
		return neutraliser{}, false
	}
	section, rest, _ := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	set := func(kv ...string) (neutraliser, bool) { return neutraliser{config: kv}, true }
	switch {
	case section == "filter" && sub != "" && (name == "clean" || name == "smudge" || name == "process"):
		p := "filter." + sub + "."
		return set(p+"clean=", p+"smudge=", p+"process=", p+"required=false")
	case section == "diff" && (sub == "" && name == "external" || sub != "" && (name == "textconv" || name == "command")):
		return neutraliser{diff: true}, true
	case section == "merge" && sub != "" && name == "driver":
		return set(key + "=false")
	case section == "core" && name == "hookspath":
		return neutraliser{hooks: true}, true
	case section == "core" && (name == "fsmonitor" || name == "editor" || name == "pager" || name == "askpass"):
		return neutraliser{}, true // safeConfig sets them for every git
	case section == "core" && (name == "sshcommand" || name == "gitproxy" || name == "alternaterefscommand"),
		section == "gpg" && name == "program",
		section == "interactive" && name == "difffilter",
		section == "uploadpack" && name == "packobjectshook",
		section == "remote" && sub != "" && (name == "uploadpack" || name == "receivepack"),
		section == "credential" && name == "helper",
		section == "hook" && sub != "" && name == "command",
		section == "trailer" && sub != "" && (name == "command" || name == "cmd"):
		return set(key + "=")
	case section == "pager" && sub == "":
		return set(key + "=false")
	case section == "sequence" && name == "editor",
		section == "remote" && (name == "url" || name == "pushurl"),
		section == "url", section == "protocol":
		// safeConfig refuses the ext and fd transports for every git,
		// the remote ones of ralph-temporal's workers too.
		return neutraliser{}, true
	}
	return neutraliser{}, false
}

// pinned is the repository a session opened, as it was at the session's
// start: ralph's git keeps to it, whatever .git or commondir say later.
type pinned struct {
	root, top, gitDir, common string
	// trusted are the program-running keys (key=value) of the
	// repository's own config that may run; all, when trustAll.
	trusted  map[string]bool
	trustAll bool
	// unpinned: git finds the repository itself (no session recorded
	// one); top, gitDir and common are what it finds now.
	unpinned bool
	// record, when set, remembers keys seen in the repository's config
	// (see Guard).
	record func(keys []string)
	// writable are more directories commands may write.
	writable []string
	warn     func(string)
	warned   sync.Once
}

// env pins ralph's git to the repository: a .git file or commondir
// rewritten later is not followed.
func (p *pinned) env() []string {
	if p.unpinned {
		return nil
	}
	return []string{"GIT_DIR=" + p.gitDir, "GIT_COMMON_DIR=" + p.common, "GIT_WORK_TREE=" + p.top}
}

// ownConfig reports whether a file is the repository's own config (not
// a file it includes, which may lie in the work tree).
func (p *pinned) ownConfig(path string) bool {
	return samePath(path, filepath.Join(p.common, "config")) || samePath(path, filepath.Join(p.gitDir, "config.worktree"))
}

// samePath compares two paths with symbolic links resolved.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// writableRoots are where a sandboxed command may write, as the sandbox
// grants it (workers/sandbox: the temporary directory and /dev/shm),
// beside the work trees themselves.
func writableRoots(extra ...string) []string {
	roots := append([]string{os.TempDir(), "/dev/shm"}, extra...)
	out := roots[:0]
	for _, r := range roots {
		if r == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		out = append(out, r)
	}
	return out
}

// modelMayWrite reports whether a configuration file lies where a
// command may write.
func modelMayWrite(path string, roots []string) bool {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for _, r := range roots {
		if within(r, path) {
			return true
		}
	}
	return false
}

// decide turns git's listing into the guard of ralph's git: every
// program-running key from a file the model may write, or from the
// repository's own config unless the person's, is neutralised.
func decide(entries []ConfigEntry, p *pinned, roots []string) (g *guard, localKeys []string) {
	g = &guard{}
	seen := map[string]bool{}
	for _, e := range entries {
		n, ok := programKey(e.Key, e.Value)
		if !ok {
			continue
		}
		trusted := false
		switch e.Scope {
		case "command":
			trusted = true // the person's environment, or ralph's own
		case "system", "global":
			trusted = e.File != "" && !modelMayWrite(e.File, roots)
		case "local", "worktree":
			if p != nil && p.ownConfig(e.File) {
				kv := e.Key + "=" + e.Value
				localKeys = append(localKeys, kv)
				trusted = p.trustAll || p.trusted[kv]
			}
		}
		if trusted {
			continue
		}
		g.untrusted = append(g.untrusted, e.Key)
		for _, kv := range n.config {
			if !seen[kv] {
				seen[kv] = true
				g.config = append(g.config, kv)
			}
		}
		g.noDiffDrivers = g.noDiffDrivers || n.diff
		g.noHooks = g.noHooks || n.hooks
	}
	return g, localKeys
}

// guard is what ralph's git in one directory runs with.
type guard struct {
	config        []string      // -c settings that neutralise untrusted keys
	noDiffDrivers bool          // porcelain diffs get --no-ext-diff --no-textconv
	noHooks       bool          // hooks stay off even where the person's would run
	env           []string      // the pinned repository, if any
	untrusted     []string      // the keys neutralised, for tests and messages
	stamps        []stamp       // what the guard was read from
	entries       []ConfigEntry // git's listing, for Guard to reuse
	gitDir        string        // the pinned repository's git directory, "" when none
}

// guards caches a guard per directory: git's listing runs again only
// when a file it was read from (or a pointer to the repository) changed.
var (
	computeMu sync.Mutex
	guardsMu  sync.Mutex
	guards    = map[string]*guard{}
	pinsMu    sync.Mutex
	pins      = map[string]*pinned{} // by work tree top, registered by Guard
	pinCache  = map[string]*pinned{} // by directory git runs in
)

// guardFor is the guard of ralph's git in dir. A failure to read the
// configuration neutralises what can be neutralised without it.
func guardFor(ctx context.Context, dir string) *guard {
	p := pinFor(dir)
	if g := cachedGuard(dir); g != nil {
		return g
	}
	// One listing at a time: the gits of a checkpoint start side by
	// side, and one reading serves them all.
	computeMu.Lock()
	defer computeMu.Unlock()
	if g := cachedGuard(dir); g != nil {
		return g
	}
	var env []string
	if p != nil {
		env = p.env()
		p.checkPointers()
	}
	start := time.Now()
	entries, err := listConfig(ctx, dir, env)
	if err != nil {
		return &guard{noDiffDrivers: true, noHooks: true, env: env}
	}
	g := guardFrom(dir, p, entries)
	// A file written while git read it may not be what git read: such a
	// guard serves this command only.
	if !changedSince(g.stamps, start) {
		guardsMu.Lock()
		guards[dir] = g
		guardsMu.Unlock()
	}
	return g
}

// changedSince reports whether a file (not a directory) was changed at
// or after t, or so shortly before it that a second write in the same
// tick of the file system's clock would leave its time stamps as they
// are: Linux stamps files from a clock that moves a tick (up to 10 ms)
// at a time.
//
// It is true too of a listing read through a link: a file's stamp is the
// link's own (what git names), and what the link points to may be
// written without the link changing.
func changedSince(stamps []stamp, t time.Time) bool {
	since := t.Add(-stampTick).UnixNano()
	for _, s := range stamps {
		if s.fi == nil || s.fi.IsDir() {
			continue
		}
		// The change time: a command can set the modification time back.
		if s.fi.Mode()&fs.ModeSymlink != 0 || filestamp.Change(s.fi) >= since || s.fi.ModTime().UnixNano() >= since {
			return true
		}
	}
	return false
}

// stampTick is more than the coarsest tick of a file system's clock.
const stampTick = 20 * time.Millisecond

// cachedGuard is dir's guard if nothing it was read from has changed.
func cachedGuard(dir string) *guard {
	guardsMu.Lock()
	g := guards[dir]
	guardsMu.Unlock()
	if g != nil && stampsHold(g.stamps) {
		return g
	}
	return nil
}

// guardFrom decides the guard of dir from git's listing.
func guardFrom(dir string, p *pinned, entries []ConfigEntry) *guard {
	var files []string
	var extra []string
	if p != nil {
		extra = append(append(extra, p.top, p.root), p.writable...)
	}
	g, local := decide(entries, p, writableRoots(extra...))
	if p != nil && p.record != nil {
		p.record(local)
	}
	if p != nil {
		g.env = p.env()
		if !p.unpinned {
			g.gitDir = p.gitDir
		}
	}
	g.entries = entries
	files = append(files, listedFiles(entries)...)
	files = append(files, configHomes()...)
	files = append(files, pointerFiles(dir, p)...)
	g.stamps = stampAll(files)
	return g
}

// listedFiles are the files a listing came from and the files its
// includes name (read or not yet there), whose stamps keep it.
func listedFiles(entries []ConfigEntry) []string {
	var files []string
	for _, e := range entries {
		if e.File != "" {
			files = append(files, e.File)
		}
		if inc, ok := includeTarget(e); ok {
			files = append(files, inc)
		}
	}
	return files
}

// includeTarget is the file an include names, so that one created later
// is noticed.
func includeTarget(e ConfigEntry) (string, bool) {
	if e.Key != "include.path" && !(strings.HasPrefix(e.Key, "includeif.") && strings.HasSuffix(e.Key, ".path")) || e.File == "" {
		return "", false
	}
	path := e.Value
	if strings.HasPrefix(path, "~/") {
		home, _ := os.UserHomeDir()
		path = filepath.Join(home, path[2:])
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(e.File), path)
	}
	return path, true
}

// configHomes are the system and global files git reads when they exist,
// so that one created later is noticed.
func configHomes() []string {
	files := []string{"/etc/gitconfig"}
	if v := os.Getenv("GIT_CONFIG_GLOBAL"); v != "" {
		files = append(files, v)
	}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if f := gitUserFile("config"); f != "" {
		files = append(files, f)
	}
	return files
}

// pointerFiles are the files that say which repository git in dir finds:
// the .git of every directory from dir up, the commondir of the one it
// names; and its HEAD, since git reads a file that includeIf
// "onbranch:…" names only while HEAD is on that branch, and a command
// that moves HEAD (git checkout) changes no configuration file.
func pointerFiles(dir string, p *pinned) []string {
	var files []string
	if p != nil {
		return append(files, filepath.Join(p.top, ".git"), filepath.Join(p.gitDir, "commondir"),
			filepath.Join(p.common, "config"), filepath.Join(p.gitDir, "config.worktree"), filepath.Join(p.gitDir, "HEAD"))
	}
	for d := dir; ; {
		files = append(files, filepath.Join(d, ".git"))
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.IsDir() {
				files = append(files, filepath.Join(d, ".git", "commondir"), filepath.Join(d, ".git", "config"), filepath.Join(d, ".git", "HEAD"))
			} else if gitDir, _ := onDiskRepository(d); gitDir != "" {
				files = append(files, filepath.Join(gitDir, "HEAD"))
			}
			return files
		}
		parent := filepath.Dir(d)
		if parent == d {
			return files
		}
		d = parent
	}
}

// checkPointers says once, plainly, that a command made the repository's
// .git or commondir name another repository than the one the session
// opened: ralph's git keeps to the one it opened.
func (p *pinned) checkPointers() {
	if p.unpinned {
		return
	}
	gitDir, common := onDiskRepository(p.top)
	if gitDir == "" || samePath(gitDir, p.gitDir) && samePath(common, p.common) {
		return
	}
	if p.warn == nil {
		return
	}
	p.warned.Do(func() {
		p.warn(fmt.Sprintf("the repository changed under ralph: %s now names %s (its objects and config in %s); "+
			"ralph's checkpoints, diff and undo keep to %s as the session opened it, and your own git will read the other one until you put .git back",
			filepath.Join(p.top, ".git"), gitDir, common, p.gitDir))
	})
}

// onDiskRepository is the git dir and common dir that top's .git names
// now, as git would find them; "" when there is none.
func onDiskRepository(top string) (gitDir, common string) {
	path := filepath.Join(top, ".git")
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return "", ""
	case fi.IsDir():
		gitDir = path
	default:
		b, err := readAdmin(top, ".git")
		if err != nil {
			return "", ""
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return path, path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(top, target)
		}
		gitDir = filepath.Clean(target)
	}
	return gitDir, commonDir(gitDir)
}

// pinFor is the pinned repository dir lies in, or nil: the session's
// (see Guard), or, for another ralph (diff, undo), what a session
// recorded of the repository whose top holds dir.
func pinFor(dir string) *pinned {
	pinsMu.Lock()
	defer pinsMu.Unlock()
	if p, ok := pinCache[dir]; ok {
		return p
	}
	var p *pinned
	for d := dir; ; {
		if p = pins[d]; p != nil {
			break
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			p = pinFromRecord(d)
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	pinCache[dir] = p
	return p
}

// stamp is what a file looked like when a guard was read from it.
type stamp struct {
	path string
	fi   os.FileInfo // nil when absent
}

func stampAll(paths []string) []stamp {
	out := make([]stamp, 0, len(paths))
	for _, p := range paths {
		fi, _ := os.Lstat(p)
		out = append(out, stamp{p, fi})
	}
	return out
}

// stampsHold reports whether every file is as it was. A directory's
// content is not compared (.git changes with every lock file), only that
// it is the same directory.
func stampsHold(stamps []stamp) bool {
	for _, s := range stamps {
		fi, err := os.Lstat(s.path)
		if (err != nil) != (s.fi == nil) {
			return false
		}
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return false
			}
			continue
		}
		if !os.SameFile(fi, s.fi) || fi.Mode() != s.fi.Mode() {
			return false
		}
		// The change time too: a command can write a file in place at its
		// old size and set its modification time back (touch -d).
		if !fi.IsDir() && (fi.Size() != s.fi.Size() || !fi.ModTime().Equal(s.fi.ModTime()) || filestamp.Change(fi) != filestamp.Change(s.fi)) {
			return false
		}
	}
	return true
}

// forgetGuards drops the cached guards, for tests that rewrite
// configuration faster than a file's time stamp moves.
func forgetGuards() {
	guardsMu.Lock()
	guards = map[string]*guard{}
	guardsMu.Unlock()
	pinsMu.Lock()
	pins, pinCache = map[string]*pinned{}, map[string]*pinned{}
	pinsMu.Unlock()
}

// bare is a git command with safeConfig and nothing decided about the
// configuration: build adds the guard. extra are -c settings after
// safeConfig.
func bare(ctx context.Context, dir string, env []string, hooks, remote bool, extra, args []string) *exec.Cmd {
	full := make([]string, 0, 2*(len(safeConfig)+len(extra))+len(args)+2)
	for _, kv := range safeConfig {
		if hooks && strings.HasPrefix(kv, "core.hooksPath=") || remote && contains(remoteConfig, kv) {
			continue
		}
		full = append(full, "-c", kv)
	}
	for _, kv := range extra {
		full = append(full, "-c", kv)
	}
	full = append(full, args...)
	// git is the one found once, off the project (childenv.Program): an
	// activated virtualenv's .venv/bin/git is the model's.
	path, err := childenv.Program("git")
	cmd := exec.CommandContext(ctx, path, full...)
	if err != nil {
		cmd.Err = err
	}
	cmd.Dir = dir
	var keep []string
	if remote {
		// A proxy with a login (http://user:pw@proxy) looks like a
		// credential by its value; a git that fetches and pushes with
		// the person's transport needs it.
		keep = proxyVars
	}
	// The person's hooks that git runs find their programs and libraries
	// off the project, as every program ralph starts for itself does.
	cmd.Env = append(childenv.PersonEnv(childenv.Scrub(os.Environ(), keep...)), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EDITOR=:")
	cmd.Env = withoutProgramTransports(append(cmd.Env, env...))
	if !remote {
		// A git that talks to no remote gets no transport at all, whatever
		// a configuration file allows: a policy for one protocol
		// (protocol.file.allow=always) wins over protocol.allow=never, and
		// -c cannot take back a remote's uploadpack (git keeps the first
		// value it reads), so a partial clone the model made would have
		// git log fetch a missing object by running the model's
		// uploadpack. An empty GIT_ALLOW_PROTOCOL overrides every policy;
		// GIT_NO_LAZY_FETCH (git 2.44 on) does not even try. os/exec keeps
		// the last of a duplicated variable, so these win over the
		// person's own.
		cmd.Env = append(cmd.Env, "GIT_ALLOW_PROTOCOL=", "GIT_NO_LAZY_FETCH=1")
		// Nor does it honour replace refs, which a command may write
		// (.git/refs/replace): `git replace` of a blob of HEAD's made
		// ralph undo "put back" the model's text and ralph diff show it.
		cmd.Env = append(cmd.Env, "GIT_NO_REPLACE_OBJECTS=1")
	}
	return cmd
}

// proxyVars are the proxy settings a git that talks to a remote keeps.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// withoutProgramTransports takes ext and fd out of GIT_ALLOW_PROTOCOL,
// which, when set, overrides every protocol policy of the configuration
// and of -c: the person's list of protocols is kept otherwise, so that a
// list narrower than git's default stays as narrow.
func withoutProgramTransports(env []string) []string {
	for i, kv := range env {
		v, ok := strings.CutPrefix(kv, "GIT_ALLOW_PROTOCOL=")
		if !ok {
			continue
		}
		var keep []string
		for _, p := range strings.Split(v, ":") {
			if q := strings.ToLower(strings.TrimSpace(p)); q != "ext" && q != "fd" {
				keep = append(keep, p)
			}
		}
		env[i] = "GIT_ALLOW_PROTOCOL=" + strings.Join(keep, ":")
	}
	return env
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// pinnedTo reports whether the guard was read from the repository p
// pins, found by git itself or pinned.
func (g *guard) pinnedTo(p *pinned) bool {
	gitDir, common := "", ""
	for _, kv := range g.env {
		if v, ok := strings.CutPrefix(kv, "GIT_DIR="); ok {
			gitDir = v
		} else if v, ok := strings.CutPrefix(kv, "GIT_COMMON_DIR="); ok {
			common = v
		}
	}
	if gitDir == "" {
		gitDir, common = onDiskRepository(p.top)
	}
	return samePath(gitDir, p.gitDir) && samePath(common, p.common)
}

// configValues yields each value of keys (lower case, as git lists them)
// in the configuration r's git commands read: from the listing the guard
// of its work tree holds, which its first command read anyway, or from
// git config where there is no listing to reuse.
func (r *Repo) configValues(ctx context.Context, keys ...string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if g := guardFor(ctx, r.Top); g.entries != nil {
			for _, e := range g.entries {
				key := strings.ToLower(e.Key)
				if slices.Contains(keys, key) && !yield(key, e.Value) {
					return
				}
			}
			return
		}
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = regexp.QuoteMeta(k)
		}
		out, _ := r.Git(ctx, nil, "config", "-z", "--get-regexp", "^("+strings.Join(quoted, "|")+")$")
		for _, rec := range bytes.Split(out, []byte{0}) {
			key, val, _ := strings.Cut(string(rec), "\n")
			if key != "" && !yield(strings.ToLower(key), val) {
				return
			}
		}
	}
}

// repositoryListing is what ConfigFiles would list of gitDir, taken from
// the listing of a guard kept for the repository pinned there, while
// nothing it was read from has changed: its local and worktree entries
// are the repository's files and what they include, read as git reads
// them. false when no such guard is kept.
func repositoryListing(gitDir string) ([]ConfigEntry, bool) {
	guardsMu.Lock()
	var found *guard
	for _, g := range guards {
		if g.gitDir != "" && g.entries != nil && samePath(g.gitDir, gitDir) {
			found = g
			break
		}
	}
	guardsMu.Unlock()
	if found == nil || !stampsHold(found.stamps) {
		return nil, false
	}
	var out []ConfigEntry
	for _, e := range found.entries {
		if e.File != "" && (e.Scope == "local" || e.Scope == "worktree") {
			out = append(out, ConfigEntry{File: e.File, Key: e.Key, Value: e.Value})
		}
	}
	return out, true
}
