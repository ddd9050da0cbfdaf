//go:build linux

package sandbox

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/filestamp"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The guards check after a command what it did to the files ralph's own
// git obeys (restore.go, nestedgit.go). A ralph killed while the command
// runs (SIGKILL, a machine that loses its power) never checks, and the
// next ralph would take what the command planted for the person's own.
// So before a command starts, what the guards recorded is written,
// whole or not at all, to a file of this ralph's in its state directory
// (memory.RegistryDir/guard), outside the project and every directory a
// command may write, and sealed with the person's state key (which no
// command can read) so that a record a command forged is never obeyed.
// Once the check after the command has run, the record is renamed to
// one that says so (".clean"); the next command renames it back, and it
// is written again only when what the guards know changed, so a command
// costs two renames. At its start in a project, ralph looks for the
// records of ralphs no longer running (the pid and start time in the
// name) that were not marked clean, and does the check they missed,
// setting aside, not deleting, what it replaces: it cannot tell what the
// command did from what the person did since. A record marked clean
// that such a ralph left has the nested repositories compared with it
// (nestedend.go): that ralph never made its last check.

// recordSuffixes: a record while a command runs, and once checked.
const (
	liveSuffix  = ".live"
	cleanSuffix = ".clean"
)

// recordMagic opens a record file, before its seal.
const recordMagic = "ralph-guard-record 1 "

// maxRecordFile is the most of a record ralph reads back; maxRecorded is
// the most of one configuration file a record keeps to put back (a
// larger one loses its added keys by git's writer instead).
const (
	maxRecordFile = 256 << 20
	maxRecorded   = 1 << 20
)

// guardRecord is what a record holds.
type guardRecord struct {
	Root  string `json:"root"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Boot  string `json:"boot,omitempty"`
	// The Landlock-only sandbox's record (guardedState), when it runs.
	Landlocked bool         `json:"landlocked,omitempty"`
	Paths      []string     `json:"paths,omitempty"`
	GitIno     uint64       `json:"git_ino,omitempty"`
	Base       []fileRecord `json:"base,omitempty"`
	Home       []fileRecord `json:"home,omitempty"` // when not Base
	HomeIsBase bool         `json:"home_is_base,omitempty"`
	// Absent are the guarded paths that did not exist when the command
	// started (Process.Wait removes those it creates).
	Absent []string `json:"absent,omitempty"`
	// Nested is the nested repositories' guard's knowledge.
	Nested *nestedRecord `json:"nested,omitempty"`
}

type fileRecord struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"`
	Data []byte      `json:"data,omitempty"`
}

type nestedRecord struct {
	Repos []repoRecord   `json:"repos,omitempty"`
	Files []configRecord `json:"files,omitempty"`
}

type repoRecord struct {
	Pointer string `json:"pointer"`
	GitDir  string `json:"git_dir"`
	Common  string `json:"common"`
	Person  bool   `json:"person,omitempty"`
}

type configRecord struct {
	Path    string    `json:"path"`
	ID      [2]uint64 `json:"id"`
	Program []string  `json:"program,omitempty"`
	Content []byte    `json:"content,omitempty"`
}

// recordDir is where the records live.
func recordDir() string { return filepath.Join(memory.RegistryDir(os.Getenv), "guard") }

// rootKey names a project in a record's name without its path.
func rootKey(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:8])
}

// recordOwner is this process as a record names it; tests stand in for
// a ralph that is gone.
var recordOwner = func() (int, uint64) { return os.Getpid(), memory.SelfStartTime() }

var recordSeq atomic.Uint64

// stateKeys caches the person's state key by the directory it lies in.
var stateKeys sync.Map // dir → []byte

// sealKey is the person's state key (memory.StateKey), which seals the
// records: it lies in ralph's configuration directory, which no command
// can read.
func sealKey() ([]byte, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, "ralph")
	if k, ok := stateKeys.Load(dir); ok {
		return k.([]byte), nil
	}
	k, err := memory.StateKey(rootfs.Person(), dir)
	if err != nil {
		return nil, err
	}
	stateKeys.Store(dir, k)
	return k, nil
}

// seal is the record's HMAC under the state key, apart from the other
// seals the key makes (memory.Seal) by a label of its own.
func seal(key, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("ralph guard record\x00"))
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// recorder keeps one runner's record.
type recorder struct {
	root   string
	name   string // the path without its suffix
	pid    int
	start  uint64
	notify func(string)

	mu      sync.Mutex
	running int
	closed  bool
	on      string    // the suffix of the file that holds the record, "" for none
	wrote   recordKey // what the record on disk was made from
	warned  bool
}

// recordKey says what a record was made from: the guards and their
// generations, and the absent paths.
type recordKey struct {
	g      *guardedState
	ggen   uint64
	n      *nestedGuard
	ngen   uint64
	absent string
}

func newRecorder(root string, notify func(string)) *recorder {
	pid, start := recordOwner()
	name := fmt.Sprintf("%s.%d.%d.%d", rootKey(root), pid, start, recordSeq.Add(1))
	return &recorder{root: root, name: filepath.Join(recordDir(), name), pid: pid, start: start, notify: notify}
}

// begin is called before a command starts, once its guards took their
// record: the record on disk is made to hold it, and to say a command
// runs.
func (rc *recorder) begin(g *guardedState, n *nestedGuard, absent []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.running++
	k := recordKey{g: g, n: n, absent: strings.Join(absent, "\x00")}
	if g != nil {
		k.ggen = g.generation()
	}
	if n != nil {
		k.ngen = n.generation()
	}
	person := rootfs.Person()
	if rc.on != "" && k == rc.wrote {
		if rc.on == liveSuffix {
			return
		}
		if err := person.Rename(rc.name+cleanSuffix, rc.name+liveSuffix); err == nil {
			rc.on = liveSuffix
			return
		}
	}
	if err := rc.write(&k, g, n, absent); err != nil {
		if !rc.warned && rc.notify != nil {
			rc.warned = true
			rc.notify(fmt.Sprintf("ralph cannot keep its record of the git files the sandbox guards (%v): were ralph killed while a command runs, "+
				"the next ralph could not check what the command did to them", err))
		}
		return
	}
	if rc.on == cleanSuffix {
		_ = person.Remove(rc.name + cleanSuffix)
	}
	rc.on, rc.wrote = liveSuffix, k
}

// write writes the record of the guards, sealed, as the live record; k
// gets the generations the record was made at.
func (rc *recorder) write(k *recordKey, g *guardedState, n *nestedGuard, absent []string) error {
	key, err := sealKey()
	if err != nil {
		return fmt.Errorf("no state key to seal it with: %w", err)
	}
	rec := guardRecord{Root: rc.root, PID: rc.pid, Start: rc.start, Boot: memory.BootID(), Absent: absent}
	if g != nil {
		k.ggen = g.fill(&rec)
	}
	if n != nil {
		rec.Nested, k.ngen = n.record()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	person := rootfs.Person()
	if err := person.MkdirAll(filepath.Dir(rc.name), 0o700); err != nil {
		return err
	}
	out := append([]byte(recordMagic+seal(key, data)+"\n"), data...)
	return memory.WriteFileAtomic(person, rc.name+liveSuffix, out, 0o600)
}

// end is called once the guards checked after a command: when none runs
// any more, the record is marked clean.
func (rc *recorder) end() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.running--
	if rc.running > 0 || rc.on != liveSuffix {
		return
	}
	person := rootfs.Person()
	if rc.closed {
		_ = person.Remove(rc.name + liveSuffix)
		rc.on = ""
		return
	}
	// The clean record is the guards' state after the check: were ralph
	// killed before the next step, the next ralph compares with it
	// (nestedend.go). The write the next step's begin would have done
	// is done now, so a step still costs what it did.
	if k := rc.wrote.now(); k != rc.wrote {
		var absent []string
		if k.absent != "" {
			absent = strings.Split(k.absent, "\x00")
		}
		if err := rc.write(&k, k.g, k.n, absent); err == nil {
			rc.wrote = k
		}
	}
	if err := person.Rename(rc.name+liveSuffix, rc.name+cleanSuffix); err != nil {
		_ = person.Remove(rc.name + liveSuffix)
		rc.on = ""
		return
	}
	rc.on = cleanSuffix
}

// close removes the record once no command runs.
func (rc *recorder) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.closed = true
	if rc.running > 0 || rc.on == "" {
		return
	}
	_ = rootfs.Person().Remove(rc.name + rc.on)
	rc.on = ""
}

// generation is the guard's count of changed records.
func (g *guardedState) generation() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen
}

// fill adds the Landlock-only guard's record to rec and returns its
// generation.
func (g *guardedState) fill(rec *guardRecord) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	rec.Landlocked, rec.Paths, rec.GitIno = true, slices.Clone(g.paths), g.gitIno
	rec.Base = entryRecords(g.base)
	if g.home != nil && g.gitIno != 0 {
		rec.HomeIsBase = true
	} else {
		rec.Home = entryRecords(g.home)
	}
	return g.gen
}

func entryRecords(m map[string]entry) []fileRecord {
	var out []fileRecord
	for _, p := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fileRecord{Path: p, Mode: m[p].mode, Data: m[p].data})
	}
	return out
}

func entryMap(rs []fileRecord) map[string]entry {
	m := map[string]entry{}
	for _, r := range rs {
		m[r.Path] = entry{mode: r.Mode, data: r.Data}
	}
	return m
}

// generation is the guard's count of looks that changed what it knows.
func (g *nestedGuard) generation() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen
}

// record is what the guard knows, to be written down, and its
// generation.
func (g *nestedGuard) record() (*nestedRecord, uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	nr := &nestedRecord{}
	for _, ptr := range slices.Sorted(maps.Keys(g.repos)) {
		r := g.repos[ptr]
		nr.Repos = append(nr.Repos, repoRecord{Pointer: ptr, GitDir: r.gitDir, Common: r.common, Person: r.person})
	}
	for _, f := range slices.Sorted(maps.Keys(g.files)) {
		k := g.files[f]
		c := configRecord{Path: f, ID: k.id, Program: slices.Sorted(maps.Keys(k.program))}
		if k.fi != nil {
			c.ID = filestamp.ID(k.fi)
		}
		// Only a file in the project is ever put back.
		if len(k.content) <= maxRecorded && g.inProject(f) {
			c.Content = k.content
		}
		nr.Files = append(nr.Files, c)
	}
	return nr, g.gen
}

// nestedFromRecord is a guard that knows what nr recorded, primed: its
// check takes back what changed since.
func nestedFromRecord(root string, nr *nestedRecord) *nestedGuard {
	g := newNestedGuard(root)
	g.primed, g.keepAside = true, true
	g.repos, g.files, g.real = map[string]*repo{}, map[string]*known{}, root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		g.real = r
	}
	for _, r := range nr.Repos {
		g.repos[r.Pointer] = &repo{gitDir: r.GitDir, common: r.Common, person: r.Person}
	}
	for _, f := range nr.Files {
		k := &known{program: map[string]bool{}, content: f.Content, id: f.ID}
		for _, kv := range f.Program {
			k.program[kv] = true
		}
		g.files[f.Path] = k
	}
	return g
}

// RecoverKilled does, for the project at root, the check that a ralph
// killed while a command ran there did not do (see above): what the
// command changed in the guarded git files is put back, and notify is
// told so in one line. A record that cannot be read or trusted is an
// error: what the command did is then unknown.
func RecoverKilled(root string, notify func(string)) error {
	dir := recordDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ralph cannot read %s, where it records the git files the sandbox guards while a command runs: %w", dir, err)
	}
	key := rootKey(root)
	selfPID, selfStart := recordOwner()
	var restored []string
	var undone []Undone
	var pids []string
	for _, e := range entries {
		name := e.Name()
		f := strings.Split(name, ".")
		if len(f) != 5 {
			continue
		}
		pid, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || pid == selfPID && start == selfStart || memory.ProcessAlive(pid, start) {
			continue
		}
		path := filepath.Join(dir, name)
		if f[0] != key || "."+f[4] != liveSuffix && "."+f[4] != cleanSuffix {
			continue
		}
		rec, err := readGuardRecord(path, root, pid, start)
		if err != nil {
			return fmt.Errorf("ralph cannot check what a command did to the git files of %s while a ralph that is gone ran it: its record %s %w; "+
				"look at its .git/hooks and its repositories' configuration yourself, then delete the record", root, path, err)
		}
		var r []string
		var u []Undone
		if "."+f[4] == liveSuffix {
			r, u = rec.recover()
		} else {
			// Checked after its last step, but the ralph ended without
			// closing: what appeared since in the repositories'
			// configuration may be a process of its session's, so it
			// is never primed as the person's (nestedend.go).
			u = rec.recoverNested()
		}
		restored, undone = append(restored, r...), append(undone, u...)
		if len(r)+len(u) > 0 && !slices.Contains(pids, f[1]) {
			pids = append(pids, f[1])
		}
		if err := rootfs.Person().Remove(path); err != nil {
			return fmt.Errorf("ralph cannot remove %s, the record of a ralph that is gone: %w", path, err)
		}
	}
	if len(restored)+len(undone) > 0 && notify != nil {
		notify(killedNote(pids, dedupe(restored), undone))
	}
	return nil
}

// readGuardRecord reads the record at path, checks its seal and that it
// is the one its name says.
func readGuardRecord(path, root string, pid int, start uint64) (*guardRecord, error) {
	b, err := rootfs.ReadSmall(rootfs.Person(), path, maxRecordFile)
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%w)", err)
	}
	head, data, ok := bytes.Cut(b, []byte("\n"))
	sum, found := strings.CutPrefix(string(head), recordMagic)
	if !ok || !found {
		return nil, errors.New("is not one ralph wrote")
	}
	key, err := sealKey()
	if err != nil {
		return nil, fmt.Errorf("cannot be checked without the state key (%w)", err)
	}
	if !hmac.Equal([]byte(sum), []byte(seal(key, data))) {
		return nil, errors.New("does not bear the seal of your state key")
	}
	var rec guardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("cannot be parsed (%w)", err)
	}
	if filepath.Clean(rec.Root) != filepath.Clean(root) || rec.PID != pid || rec.Start != start {
		return nil, errors.New("is not the record its name says")
	}
	return &rec, nil
}

// recover puts back what changed since the record: the Landlock-only
// guard's paths, the absent ones a command created, and the program keys
// of the repositories' configuration. It returns what it put back and
// what it took back.
func (rec *guardRecord) recover() ([]string, []Undone) {
	var restored []string
	if rec.Landlocked {
		g := &guardedState{root: rec.Root, paths: rec.Paths, running: 1, base: entryMap(rec.Base), gitIno: rec.GitIno, setAside: true}
		switch {
		case rec.HomeIsBase:
			g.home = g.base
		case len(rec.Home) > 0:
			g.home = entryMap(rec.Home)
		}
		restored = append(restored, g.end()...)
	}
	for _, path := range rec.Absent {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if remove(path, false) == nil {
			rel, _ := filepath.Rel(rec.Root, path)
			restored = append(restored, rel)
		}
	}
	return restored, rec.recoverNested()
}

// killedNote is the one line that says what the check a killed ralph
// missed put back.
func killedNote(pids []string, restored []string, undone []Undone) string {
	var parts []string
	if len(restored) > 0 {
		parts = append(parts, "put back "+strings.Join(restored, ", "))
	}
	var notes []string
	for _, u := range undone {
		if u.Note != "" {
			notes = append(notes, u.Note)
			continue
		}
		parts = append(parts, fmt.Sprintf("took back %s in %s", strings.Join(u.Keys, ", "), u.File))
	}
	who := strings.Join(pids, ", ")
	if len(parts) == 0 {
		return fmt.Sprintf("an earlier ralph (pid %s) was killed before it could check what a command did: %s", who, strings.Join(notes, "; "))
	}
	s := fmt.Sprintf("the sandbox %s, which a command changed while an earlier ralph (pid %s) ran it and was killed before it could check: "+
		"git would run or read them outside the sandbox (what the sandbox replaced is kept beside, renamed *.ralph-set-aside)", strings.Join(parts, " and "), who)
	for _, n := range notes {
		s += "; " + n
	}
	return s
}
