package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// trustRecord is what ralph remembers, outside the project and outside
// every place a command may write, of the repository a project lies in:
// whether there was one when a session began, where it was, and which
// program-running keys of its own config are the person's. A repository
// that appeared after ralph saw the project without one (the model's
// git init) is the model's, and so is a key that appeared in the
// repository's config while a session ran; a key that appeared between
// sessions is the person's.
type trustRecord struct {
	Root      string   `json:"root"`
	Repo      bool     `json:"repo"`
	Top       string   `json:"top,omitempty"`
	GitDir    string   `json:"git_dir,omitempty"`
	CommonDir string   `json:"common_dir,omitempty"`
	Trusted   []string `json:"trusted,omitempty"`
	Seen      []string `json:"seen,omitempty"`
	Writable  []string `json:"writable,omitempty"` // sandbox_writable and --add-dir
}

// recordMu serialises a process's writes of its records.
var recordMu sync.Mutex

// recordPath is where the record of a directory lives: in ralph's user
// configuration directory, which the sandbox keeps out of a command's
// reach.
func recordPath(dir string) string {
	base, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(base, "ralph", "git-trust", hex.EncodeToString(sum[:16])+".json")
}

func loadRecord(dir string) *trustRecord {
	var rec trustRecord
	if !readRecord(recordPath(dir), &rec) {
		return nil
	}
	return &rec
}

func saveRecord(dir string, rec *trustRecord) error {
	if err := writeRecord(recordPath(dir), rec); err != nil {
		return fmt.Errorf("record of the repository's trust: %w", err)
	}
	return nil
}

// readRecord reads the JSON record at path into v, and reports whether
// there was one ralph could read.
func readRecord(path string, v any) bool {
	if path == "" {
		return false
	}
	b, err := rootfs.ReadSmall(rootfs.Person(), path, maxRecord)
	return err == nil && json.Unmarshal(b, v) == nil
}

// maxRecord is the most of a trust record ralph reads.
const maxRecord = 1 << 20

// writeRecord writes v as JSON at path in ralph's user configuration
// directory, whole or not at all, through the person's door (a random
// temporary file made with O_EXCL, renamed over the name); "" writes
// nothing. A record that already says the same is left as it is: every
// session writes its record, almost always unchanged, and a new file
// and a rename cost a one-shot more than reading the old one.
func writeRecord(path string, v any) error {
	if path == "" {
		return nil
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	person := rootfs.Person()
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if old, fi, err := rootfs.ReadSmallInto(person, path, maxRecord, nil); err == nil && bytes.Equal(old, b) && fi.Mode().Perm() == 0o600 {
		return nil
	}
	if err := person.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return memory.WriteFileAtomicUnsynced(person, path, b, 0o600)
}

// pinFromRecord is the repository whose top is top as a session recorded
// it, for a ralph that opens no session (diff, undo): pinned where the
// session pinned it while that still exists, with the keys it trusted.
// Without a record, git finds the repository itself and its own config
// is trusted, as at a session's first sight of it.
func pinFromRecord(top string) *pinned {
	rec := loadRecord(top)
	if rec == nil || !rec.Repo {
		gitDir, common := onDiskRepository(top)
		return &pinned{root: top, top: top, gitDir: gitDir, common: common, unpinned: true, trustAll: rec == nil}
	}
	p := &pinned{root: rec.Root, top: rec.Top, gitDir: rec.GitDir, common: rec.CommonDir, trusted: set(rec.Trusted), writable: rec.Writable}
	if _, err := os.Stat(filepath.Join(p.common, "config")); err != nil {
		p.gitDir, p.common = onDiskRepository(top)
		p.unpinned = true
	}
	return p
}

// Guard is called when a session opens the project at root, with the
// repository it lies in (nil: none) and the directories beside the
// project that its commands may write (sandbox_writable, --add-dir). From then on ralph's git in that
// repository is pinned to the git dir and common dir it has now, and
// runs programs from the repository's own config only for the keys that
// are the person's (see trustRecord); warn says, once, that a command
// changed which repository .git names.
func Guard(ctx context.Context, root string, r *Repo, writable []string, warn func(string)) {
	if r == nil {
		_ = saveRecord(root, &trustRecord{Root: root})
		return
	}
	rec := loadRecord(r.Top)
	if rec == nil && r.Top != root {
		rec = loadRecord(root)
	}
	p := &pinned{root: root, top: r.Top, gitDir: r.GitDir, common: commonDir(r.GitDir), writable: writable, warn: warn}
	// The repository's own program-running keys now, by git's reading.
	// The first look at the work tree (Context) may have read it
	// already, from the same repository.
	var current []string
	entries, err := []ConfigEntry(nil), error(nil)
	start, reused := time.Now(), false
	if g := cachedGuard(r.Top); g != nil && g.pinnedTo(p) {
		entries, reused = g.entries, true // read before, and kept then
	} else {
		entries, err = listConfig(ctx, r.Top, p.env())
	}
	if err == nil {
		p.trustAll = true
		_, current = decide(entries, p, nil)
		p.trustAll = false
	}
	real, id, _ := realDir(p.common)
	switch {
	case isModelRepository(real, id):
		// The sandbox saw a command make it (modelrepo.go).
		p.trusted = map[string]bool{}
	case rec == nil:
		// First sight: what is there is the person's.
		p.trusted = set(current)
	case !rec.Repo:
		// ralph saw the project without a repository: this one is
		// the model's, or at least not known to be the person's, and
		// so are its hooks. One whose common directory lies outside
		// the project (a .git file naming another repository of the
		// person's) is not marked: its config is not trusted in this
		// session, but its hooks stay the person's where they live.
		p.trusted = map[string]bool{}
		if err := MarkModelRepository(root, p.common, "ralph last saw "+root+" without a repository"); errors.Is(err, ErrOutsideProject) && warn != nil {
			warn(fmt.Sprintf("the repository of %s lies outside it (%s), and ralph last saw %s without one: a .git that names another repository "+
				"may be a command's; programs its config names do not run in ralph's git here", root, p.common, root))
		}
	case !samePath(rec.GitDir, p.gitDir) || !samePath(rec.CommonDir, p.common):
		p.trusted = map[string]bool{}
		if warn != nil {
			warn(fmt.Sprintf("the repository at %s is not the one ralph last saw there (%s, now %s): "+
				"programs its config names (filters, diff drivers, hooks) do not run in ralph's git", r.Top, rec.CommonDir, p.common))
		}
	default:
		p.trusted = map[string]bool{}
		seen := set(rec.Seen)
		for _, kv := range current {
			if slices.Contains(rec.Trusted, kv) || !seen[kv] {
				p.trusted[kv] = true
			}
		}
	}
	next := &trustRecord{Root: root, Repo: true, Top: r.Top, GitDir: p.gitDir, CommonDir: p.common,
		Trusted: keys(p.trusted), Seen: current, Writable: writable}
	_ = saveRecord(r.Top, next)
	// Keys that appear while the session runs are remembered as seen,
	// so that the next session does not take them for the person's.
	var mu sync.Mutex
	p.record = func(kvs []string) {
		mu.Lock()
		defer mu.Unlock()
		seen := set(next.Seen)
		grew := false
		for _, kv := range kvs {
			if !seen[kv] {
				next.Seen = append(next.Seen, kv)
				grew = true
			}
		}
		if grew {
			_ = saveRecord(r.Top, next)
		}
	}
	pinsMu.Lock()
	pins[r.Top] = p
	pinCache = map[string]*pinned{}
	pinsMu.Unlock()
	guardsMu.Lock()
	guards = map[string]*guard{}
	if err == nil {
		// As guardFor keeps one: not when a file was written while git
		// read it, or was read through a link.
		if g := guardFrom(r.Top, p, entries); reused || !changedSince(g.stamps, start) {
			guards[r.Top] = g
		}
	}
	guardsMu.Unlock()
}

func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
