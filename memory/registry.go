package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"
)

// RegistryEntry is one project in the cross-project registry that `ralph
// sessions` lists: the last session started there. The registry keeps no
// status (the project's own records say how a session ended); Status is
// filled in for listings, and older ralphs wrote the status a session
// started with.
type RegistryEntry struct {
	Root      string    `json:"root"`
	SessionID string    `json:"session_id"`
	Status    string    `json:"status,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// Model, FirstPrompt, Turns and CostUSD are filled in for listings
	// from the session's own records (the registry itself keeps none of
	// them): what tells one session from another at a glance.
	Model       string   `json:"model,omitempty"`
	FirstPrompt string   `json:"first_prompt,omitempty"`
	Turns       int      `json:"turns,omitempty"`
	CostUSD     *float64 `json:"cost_usd,omitempty"`
}

// Registry file names inside the registry directory.
const (
	registryFile     = "projects.json"
	registryLockFile = "registry.lock"
)

// registryLockTimeout bounds the wait for the registry lock. An update
// holds it for a few milliseconds, so only a hung process (or twenty
// thousand ralphs) could make anyone wait this long.
const registryLockTimeout = 5 * time.Second

// RegistryDir is where the registry lives: $RALPH_HOME, else
// $XDG_STATE_HOME/ralph, else ~/.local/state/ralph. A relative
// XDG_STATE_HOME is ignored, as the XDG spec requires, because it would
// put the registry somewhere different in every project. getenv is
// os.Getenv outside tests.
func RegistryDir(getenv func(string) string) string {
	if d := getenv("RALPH_HOME"); d != "" {
		return filepath.Clean(d)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ralph")
	}
	home := getenv("HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		} else {
			// No home at all (a bare container): a per-machine
			// directory is better than failing every update.
			return filepath.Join(os.TempDir(), "ralph-state")
		}
	}
	return filepath.Join(home, ".local", "state", "ralph")
}

// Registry is the list of projects ralph has worked in, shared by every
// ralph process of the user. Updates are serialized by a lock file and
// written atomically, so concurrent ralphs never lose each other's entries.
type Registry struct {
	fs  afero.Fs
	dir string
}

// OpenRegistry returns the registry in dir; nothing is read or created
// until the first List or Update.
func OpenRegistry(fs afero.Fs, dir string) *Registry {
	return &Registry{fs: fs, dir: dir}
}

func (r *Registry) path() string { return filepath.Join(r.dir, registryFile) }

// Update records e, replacing any entry with the same root (made absolute
// and clean). A zero UpdatedAt means now. Entries whose root directory no
// longer exists are dropped; a corrupt registry is moved aside to
// projects.json.corrupt-<unix seconds> and started afresh, since it only
// holds a convenience listing that the next updates rebuild.
func (r *Registry) Update(e RegistryEntry) error {
	if e.Root == "" {
		return errors.New("registry update: empty project root")
	}
	root, err := filepath.Abs(e.Root)
	if err != nil {
		return fmt.Errorf("registry update: %w", err)
	}
	e.Root = root
	if e.UpdatedAt.IsZero() {
		e.UpdatedAt = time.Now().UTC()
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()

	entries, err := r.read()
	var corrupt *corruptRegistryError
	if errors.As(err, &corrupt) {
		aside := fmt.Sprintf("%s.corrupt-%d", r.path(), time.Now().Unix())
		if rerr := r.fs.Rename(r.path(), aside); rerr != nil {
			return fmt.Errorf("registry update: move corrupt %s aside: %w", r.path(), rerr)
		}
		entries, err = nil, nil
	}
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(x RegistryEntry) bool { return x.Root == e.Root })
	// The entry being written is exempt from the existence check: its
	// process is working in that root right now.
	entries = append(r.present(entries), e)
	sortEntries(entries)
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("registry update: %w", err)
	}
	// Whole or not at all, but not fsynced: the registry only names the
	// projects whose own records hold the sessions, and the next updates
	// rebuild it if a crash of the machine damages it (see above). It is
	// written through its spare, as session.json is (writeAtomicSpare):
	// every session updates it, and no update then makes or frees a file.
	return writeAtomicSpare(r.fs, r.path(), append(b, '\n'), 0o644, false, nil)
}

// List returns the registered projects, most recently updated first,
// without those whose root directory is gone. It takes no lock: Update
// replaces the file in one step, an exchange with its spare, so a fresh
// open reads one whole version; a read that spans two updates can read
// the old file while it is rewritten as the spare, so a file that does
// not parse is read once more before it counts as corrupt.
func (r *Registry) List() ([]RegistryEntry, error) {
	entries, err := r.read()
	var corrupt *corruptRegistryError
	if errors.As(err, &corrupt) {
		entries, err = r.read()
	}
	if err != nil {
		return nil, err
	}
	entries = r.present(entries)
	sortEntries(entries)
	return entries, nil
}

// corruptRegistryError names a registry file that is not valid JSON.
type corruptRegistryError struct {
	path string
	err  error
}

func (e *corruptRegistryError) Error() string {
	return fmt.Sprintf("registry %s is corrupt (the next update moves it aside): %v", e.path, e.err)
}

func (e *corruptRegistryError) Unwrap() error { return e.err }

func (r *Registry) read() ([]RegistryEntry, error) {
	b, err := afero.ReadFile(r.fs, r.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read registry %s: %w", r.path(), err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	var entries []RegistryEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, &corruptRegistryError{path: r.path(), err: err}
	}
	return entries, nil
}

// present drops entries whose root is no longer a directory. Other stat
// errors (a permission problem, an unmounted network drive) keep the
// entry: only a root that is certainly gone is forgotten.
func (r *Registry) present(entries []RegistryEntry) []RegistryEntry {
	return slices.DeleteFunc(entries, func(x RegistryEntry) bool {
		fi, err := r.fs.Stat(x.Root)
		if err != nil {
			return errors.Is(err, os.ErrNotExist)
		}
		return !fi.IsDir()
	})
}

// sortEntries orders by UpdatedAt, newest first, then by root so that the
// order is stable between runs.
func sortEntries(entries []RegistryEntry) {
	slices.SortStableFunc(entries, func(a, b RegistryEntry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Root, b.Root)
	})
}

// registryMu serializes this process's registry updates where there is
// no flock, because afero.MemMapFs's O_EXCL is not atomic between
// goroutines.
var registryMu sync.Mutex

// lock takes the registry lock: an exclusive flock on registry.lock where
// files are kernel files (the file is never removed, so no unlink race),
// else registryMu plus O_EXCL creation of registry.lock.excl, removed on
// unlock. Both spin with a short sleep until registryLockTimeout.
func (r *Registry) lock() (unlock func(), err error) {
	if err := r.fs.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	path := filepath.Join(r.dir, registryLockFile)
	deadline := time.Now().Add(registryLockTimeout)
	if hasDescriptors(r.fs, r.dir) {
		unlock, err := r.flock(path, deadline)
		if !errors.Is(err, errNoRegistryFlock) {
			return unlock, err
		}
	}
	registryMu.Lock()
	excl := path + ".excl"
	for sleep := time.Millisecond; ; sleep = min(2*sleep, 20*time.Millisecond) {
		f, err := r.fs.OpenFile(excl, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_ = f.Close()
			return func() { _ = r.fs.Remove(excl); registryMu.Unlock() }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			registryMu.Unlock()
			return nil, fmt.Errorf("registry lock %s: %w", excl, err)
		}
		if time.Now().After(deadline) {
			registryMu.Unlock()
			return nil, fmt.Errorf("registry lock %s: still held after %v (remove it if no ralph is running)", excl, registryLockTimeout)
		}
		time.Sleep(sleep)
	}
}

// errNoRegistryFlock sends lock to its O_EXCL fallback.
var errNoRegistryFlock = errors.New("no flock on this filesystem")

// flock takes an exclusive flock on registry.lock, retrying until
// deadline; errNoRegistryFlock says the filesystem has no flock to take.
func (r *Registry) flock(path string, deadline time.Time) (unlock func(), err error) {
	f, err := r.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("registry lock %s: %w", path, err)
	}
	d, ok := f.(fder)
	if !ok {
		_ = f.Close()
		return nil, errNoRegistryFlock
	}
	for sleep := time.Millisecond; ; sleep = min(2*sleep, 20*time.Millisecond) {
		switch err := tryFlock(d.Fd(), true); {
		case err == nil:
			return func() { closeLocked(f, d.Fd()) }, nil
		case !errors.Is(err, errWouldBlock):
			_ = f.Close()
			return nil, errNoRegistryFlock
		case time.Now().After(deadline):
			_ = f.Close()
			return nil, fmt.Errorf("registry lock %s: still held by another ralph after %v", path, registryLockTimeout)
		}
		time.Sleep(sleep)
	}
}
