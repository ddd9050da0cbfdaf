package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/spf13/afero"
)

// Git converts some files on their way into a commit and back out: line
// endings under the text, eol and crlf attributes or core.autocrlf, ident,
// a working-tree-encoding. A checkpoint stores what git would commit, and
// for most files writing that back through git's filters gives the bytes
// that were on disk. For some it does not: a CRLF file in a `* text=auto`
// repository is stored with LF and comes back with LF. Such a file is kept
// a second time, byte for byte, in the checkpoint's raw tree, which a
// restore writes from without filters.
//
// The raw tree is named in the checkpoint commit's message (rawTrailer)
// and kept from garbage collection by a ref beside the checkpoint's. It
// carries every such file of the work tree, not only the turn's: each
// checkpoint's raw tree starts from the one before. Files under a filter
// attribute (LFS and the like) are left to their filter, which puts back
// what it cleaned; their raw bytes would be the very blobs LFS keeps out of
// the repository.
const rawTrailer = "ralph-raw-tree: "

// rawSuffix ends the name of the ref that keeps a checkpoint's raw tree.
const rawSuffix = ".raw"

// emptyTree is git's empty tree (the same in every SHA-1 repository).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// convertAttrs are the attributes under which git may change a file's
// bytes on their way in or out; filter is asked apart.
var convertAttrs = []string{"text", "eol", "crlf", "ident", "working-tree-encoding", "filter"}

// mayConvert reports whether git may convert any file's bytes in this
// repository: core.autocrlf is on, or some attributes file exists (the
// person's global one, info/attributes, a .gitattributes in the work
// tree's top, or one the index names). It is read once per session, with
// one git process for the configuration and no walk over the tree: the
// index's bytes are searched for the word, which also finds it in a path
// the index stores shortened (a false positive costs only the exact look
// of check-attr). A .gitattributes the model adds is seen by keepRaw.
func (c *Checkpoints) mayConvert(ctx context.Context) bool {
	c.convertOnce.Do(func() {
		c.autocrlfOn, c.attrsSeen = c.readConvertConfig(ctx)
		if c.attrsSeen {
			return
		}
		// The system's file is where configMayName looks for the
		// system's config: a git built for another prefix is not seen.
		for _, f := range []string{
			"/etc/gitattributes",
			gitUserFile("attributes"),
			filepath.Join(c.repo.common(), "info", "attributes"),
			filepath.Join(c.repo.Top, ".gitattributes"),
		} {
			if _, err := os.Stat(f); err == nil {
				c.attrsSeen = true
				return
			}
		}
		c.attrsSeen = indexMentions(c.repo.GitDir, "attributes")
	})
	return c.autocrlfOn || c.attrsSeen
}

// readConvertConfig reads core.autocrlf, and whether core.attributesFile
// names a file, in one git process.
func (c *Checkpoints) readConvertConfig(ctx context.Context) (autocrlf, attrsFile bool) {
	if !configMayName(c.repo.common(), c.repo.GitDir, "autocrlf", "attributesfile") {
		return false, false
	}
	out, _ := c.repo.Git(ctx, nil, "config", "-z", "--get-regexp", `^core\.(autocrlf|attributesfile)$`)
	for _, rec := range bytes.Split(out, []byte{0}) {
		key, val, _ := strings.Cut(string(rec), "\n")
		switch strings.ToLower(key) {
		case "core.autocrlf":
			v := strings.ToLower(strings.TrimSpace(val))
			autocrlf = v == "true" || v == "input" || v == "yes" || v == "on" || v == "1"
		case "core.attributesfile":
			attrsFile = strings.TrimSpace(val) != ""
		}
	}
	return autocrlf, attrsFile
}

// configMayName reports whether git's configuration may set any of keys,
// without a git process: none of its files (the system's, the person's,
// the repository's, whose common directory is common and git directory
// gitDir) mentions them, no file includes another, and the environment
// adds none. A mention anywhere, even in a comment, sends the question to
// git. keys are lower case: the files are compared lowered.
func configMayName(common, gitDir string, keys ...string) bool {
	if os.Getenv("GIT_CONFIG_PARAMETERS") != "" || os.Getenv("GIT_CONFIG_COUNT") != "" {
		return true
	}
	home, _ := os.UserHomeDir()
	system := os.Getenv("GIT_CONFIG_SYSTEM")
	if system == "" {
		system = "/etc/gitconfig"
	}
	global := []string{filepath.Join(home, ".gitconfig"), gitUserFile("config")}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		global = []string{g}
	}
	files := append([]string{system}, global...)
	if os.Getenv("GIT_CONFIG_NOSYSTEM") != "" {
		files = files[1:]
	}
	// The repository's own files are read through the git dir's door
	// (gitdoor.go); the system and global ones are the person's.
	read := func(f string) ([]byte, error) { return afero.ReadFile(rootfs.Person(), f) }
	reads := []func() ([]byte, error){
		func() ([]byte, error) { return readAdmin(common, "config") },
		func() ([]byte, error) { return readAdmin(gitDir, "config.worktree") },
	}
	for _, f := range files {
		reads = append(reads, func() ([]byte, error) { return read(f) })
	}
	for _, r := range reads {
		data, err := r()
		if missing(err) {
			continue
		}
		if err != nil {
			return true
		}
		text := strings.ToLower(string(data))
		if strings.Contains(text, "include") {
			return true
		}
		for _, k := range keys {
			if strings.Contains(text, k) {
				return true
			}
		}
	}
	return false
}

// indexMentions reports whether the person's index file, or the shared
// part of a split one, holds word anywhere; true when it cannot be read.
func indexMentions(gitDir, word string) bool {
	data, err := readAdmin(gitDir, "index")
	if missing(err) {
		return false
	}
	if err != nil || bytes.Contains(data, []byte(word)) {
		return true
	}
	shared, err := sharedIndexOf(data)
	if err != nil {
		return true
	}
	if shared == "" {
		return false
	}
	data, err = readAdmin(gitDir, "sharedindex."+shared)
	return err != nil || bytes.Contains(data, []byte(word))
}

// convertible returns those of paths (relative to the top) whose bytes git
// may convert without a filter: one git check-attr for all of them.
func (c *Checkpoints) convertible(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	args := append([]string{"check-attr", "-z", "--stdin"}, convertAttrs...)
	out, err := runCmd(ctx, scaled(0, len(paths)), false, c.repo.Top, nil, nulList(paths), args...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading attributes: %w", err)
	}
	// Output: <path> NUL <attribute> NUL <value> NUL, per path and
	// attribute, in the order asked.
	auto := c.autocrlfOn
	converts, filtered := map[string]bool{}, map[string]bool{}
	f := bytes.Split(out, []byte{0})
	for i := 0; i+2 < len(f); i += 3 {
		p, attr, val := string(f[i]), string(f[i+1]), string(f[i+2])
		switch {
		case val == "unspecified" || val == "unset":
			if attr == "text" && auto && val == "unspecified" {
				converts[p] = true
			}
		case attr == "filter":
			filtered[p] = true
		default:
			converts[p] = true
		}
	}
	var out2 []string
	for _, p := range paths {
		if converts[p] && !filtered[p] {
			out2 = append(out2, p)
		}
	}
	return out2, nil
}

// indexEntries reads ralph's index (env names it): each path's mode and
// object.
func (c *Checkpoints) indexEntries(ctx context.Context, env []string) (map[string]treeEntry, error) {
	out, err := c.repo.Git(ctx, env, "ls-files", "-s", "-z")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	entries := map[string]treeEntry{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// <mode> SP <object> SP <stage> TAB <path>
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if f := strings.Fields(string(meta)); ok && len(f) == 3 {
			entries[string(path)] = treeEntry{mode: f[0], object: f[1]}
		}
	}
	return entries, nil
}

// rawDiffers returns the files of paths whose bytes on disk differ from
// the object ralph's index holds for them (git converted them on the way
// in), with their raw objects, written to the repository.
func (c *Checkpoints) rawDiffers(ctx context.Context, env []string, paths []string, all bool) ([]rawEntry, error) {
	if !c.mayConvert(ctx) {
		return nil, nil
	}
	var index map[string]treeEntry
	var err error
	if all {
		if index, err = c.indexEntries(ctx, env); err != nil {
			return nil, err
		}
		paths = paths[:0:0]
		for p, e := range index {
			if e.mode == "100644" || e.mode == "100755" {
				paths = append(paths, p)
			}
		}
	}
	// The raw bytes are the work tree's, hashed into the repository:
	// a baseline's look over every tracked file passes the door too.
	cands, err := c.convertible(ctx, c.withhold(slices.Clone(paths)))
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	if index == nil {
		if index, err = c.indexEntries(ctx, env); err != nil {
			return nil, err
		}
	}
	var files []string
	var stdin bytes.Buffer
	var size int64
	for _, p := range cands {
		e, ok := index[p]
		if !ok || (e.mode != "100644" && e.mode != "100755") {
			continue
		}
		// A symbolic link or a path gone since has no bytes of its own
		// to keep; hash-object would follow the link.
		fi, err := os.Lstat(c.repo.Abs(p))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, p)
		stdin.WriteString(p + "\n")
		size += fi.Size()
	}
	if len(files) == 0 {
		return nil, nil
	}
	out, err := runCmd(ctx, scaled(size, len(files)), false, c.repo.Top, nil, stdin.Bytes(),
		"hash-object", "-w", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: keeping raw bytes: %w", err)
	}
	objects := strings.Fields(string(out))
	if len(objects) != len(files) {
		return nil, fmt.Errorf("checkpoint: git hashed %d of %s", len(objects), text.Counted(len(files), "file", "files"))
	}
	var raw []rawEntry
	for i, p := range files {
		if e := index[p]; objects[i] != e.object {
			raw = append(raw, rawEntry{mode: e.mode, object: objects[i], path: p})
		}
	}
	return raw, nil
}

// rawEntry is a file kept byte for byte.
type rawEntry struct{ mode, object, path string }

// rawTree brings the previous checkpoint's raw tree up to date: the
// changed paths leave it, and raw (each a changed path, or on a baseline
// any path) enter it. It returns "" when no file needs one.
func (c *Checkpoints) rawTree(ctx context.Context, prev string, changed []string, raw []rawEntry) (string, error) {
	if prev == "" && len(raw) == 0 {
		return "", nil
	}
	// The throwaway index lies beside ralph's own, not in the temporary
	// directory: a command may write that, and a link it planted at the
	// name would have git's lock file write the index where it points.
	name := c.index + ".raw"
	_ = c.own.Remove(name)
	_ = c.own.Remove(name + ".lock")
	if _, err := ownIndex(c.own, name); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	defer c.own.Remove(name)
	env := []string{"GIT_INDEX_FILE=" + name}
	if prev != "" {
		if _, err := c.repo.Git(ctx, env, "read-tree", prev); err != nil {
			return "", fmt.Errorf("checkpoint: %w", err)
		}
	}
	var stdin bytes.Buffer
	for _, p := range changed {
		// Mode 0 removes a path (and is nothing for one not there).
		fmt.Fprintf(&stdin, "0 %s\t%s\x00", strings.Repeat("0", 40), strings.TrimSuffix(p, "/"))
	}
	for _, e := range raw {
		fmt.Fprintf(&stdin, "%s %s\t%s\x00", e.mode, e.object, e.path)
	}
	if _, err := runCmd(ctx, scaled(0, len(changed)+len(raw)), false, c.repo.Top, env, stdin.Bytes(),
		"update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	out, err := c.repo.Git(ctx, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	if tree == emptyTree {
		return "", nil
	}
	return tree, nil
}

// rawTreeOf reads the raw tree a checkpoint commit names, "" when it names
// none (or is not ralph's: a person's commit message could say anything).
func (r *Repo) rawTreeOf(ctx context.Context, commit string) string {
	if commit == "" {
		return ""
	}
	out, ok := looseCommit(r.common(), commit)
	if !ok {
		// Read as stored and checked against its name, as looseCommit
		// reads (verified.go): the raw tree it names is written back.
		bodies, err := r.readObjects(ctx, commitKind, []string{commit})
		if err != nil {
			return ""
		}
		out = bodies[commit]
	}
	head, msg, _ := strings.Cut(string(out), "\n\n")
	if !strings.Contains(head, "\nauthor ralph <ralph@localhost> ") {
		return ""
	}
	for _, line := range strings.Split(msg, "\n") {
		if t, ok := strings.CutPrefix(line, rawTrailer); ok && len(t) >= 40 {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// HeadIsExact reports whether HEAD, written back through git's filters,
// gives every tracked file's bytes as they are on disk, so that a session
// on a clean work tree may take HEAD for its baseline. It is false when a
// file is on disk as git would not write it (a CRLF file committed in a
// `* text=auto` repository): the baseline must then be recorded, with its
// raw tree. It runs after Seed.
func (c *Checkpoints) HeadIsExact(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	env := []string{"GIT_INDEX_FILE=" + c.index}
	if c.ownIndex(c.index) != nil || c.catchUp(ctx, env) != nil {
		return false
	}
	raw, err := c.rawDiffers(ctx, env, nil, true)
	return err == nil && len(raw) == 0
}

// keepRaw finds the files of changed (every tracked file, for a baseline)
// that git converted on their way into the index, and returns the
// checkpoint's raw tree, kept by ref; "" when no file of the work tree
// needs one.
func (c *Checkpoints) keepRaw(ctx context.Context, env []string, changed []string, baseline bool, ref string) (string, error) {
	if !c.rawKnown {
		c.rawPrev, c.rawKnown = c.repo.rawTreeOf(ctx, c.last), true
	}
	prev := c.rawPrev
	if baseline {
		prev = ""
	}
	c.mayConvert(ctx)
	for _, p := range changed {
		if path.Base(p) == ".gitattributes" {
			c.attrsSeen = true
		}
	}
	raw, err := c.rawDiffers(ctx, env, changed, baseline)
	if err != nil {
		return "", err
	}
	tree, err := c.rawTree(ctx, prev, changed, raw)
	if err != nil || tree == "" {
		return "", err
	}
	if _, err := c.repo.Git(ctx, nil, "update-ref", ref, tree); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return tree, nil
}

// gitUserFile is the person's own git file of that name (config,
// attributes, ignore), where git looks for it: under $XDG_CONFIG_HOME/git,
// else ~/.config/git; "" when neither is set.
func gitUserFile(name string) string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "git", name)
}
