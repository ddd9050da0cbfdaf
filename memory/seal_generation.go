package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A seal says "ralph wrote these settings", and every record ralph ever
// sealed for a session stays sealed: a command in the fallback sandbox
// could copy a session's record aside and put it back once the person had
// added a --verify, and the next resume went on without it. So each
// session's records count their generations (State.Generation, under the
// seal), and ralph's state directory, which no command can write, keeps
// the latest generation of each session (Generations): a record older
// than that is refused in one sentence (project.trustSaved) and set
// aside.
//
// A new generation g is written in three steps, so that a crash between
// any two leaves the newest record accepted: the store is brought to g-1
// (if it says less), the record of generation g is written durably, and
// then the store says g. The store may therefore lag its session by one:
// a record of the store's generation or the one after it is fresh, any
// other is not. A session's first generation needs no entry at all (a
// store that knows nothing of a session says 0), so a one-shot, which
// never changes its settings, writes nothing here.

// SealsDir is the directory of ralph's state directory that holds the
// generations, one directory per project.
const SealsDir = "seals"

// ErrStale is matched (errors.Is) by every *StaleError.
var ErrStale = errors.New("an older record than the last one ralph sealed")

// StaleError is a session's record whose generation is not the latest
// ralph sealed for it.
type StaleError struct {
	Generation uint64 // the record's
	Latest     uint64 // what ralph's state directory says
}

func (e *StaleError) Error() string {
	if e.Generation < e.Latest {
		return fmt.Sprintf("it is an older copy than the last record ralph saved (generation %d, where ralph's state directory says %d)", e.Generation, e.Latest)
	}
	return fmt.Sprintf("its generation %d is not one ralph saved (ralph's state directory says %d)", e.Generation, e.Latest)
}

func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Generations keeps the latest sealed generation of each session of one
// project, a small file per session under ralph's state directory
// (<state>/seals/<project>/<session id>), read and written through the
// person's door.
type Generations struct {
	fs  afero.Fs
	dir string
}

// OpenGenerations is the store of the project at root in the state
// directory stateDir (RegistryDir), through person (rootfs.Person). The
// project is named by its path with links resolved, hashed: the same
// project reached by another path is the same store.
func OpenGenerations(person afero.Fs, stateDir, root string) *Generations {
	if stateDir == "" {
		return nil
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return &Generations{fs: person, dir: filepath.Join(stateDir, SealsDir, hex.EncodeToString(sum[:8]))}
}

// path is session id's file; an id that is no plain name is refused.
func (g *Generations) path(id string) (string, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.ContainsRune(id, 0) {
		return "", fmt.Errorf("session id %q is no name", id)
	}
	return filepath.Join(g.dir, id), nil
}

// Latest is the generation the store keeps for session id, 0 when it
// keeps none.
func (g *Generations) Latest(id string) (uint64, error) {
	path, err := g.path(id)
	if err != nil {
		return 0, err
	}
	b, err := rootfs.ReadSmall(g.fs, path, 64)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the seal generation of session %s: %w", id, err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the seal generation of session %s: %s does not hold one", id, path)
	}
	return n, nil
}

// CheckFresh reports a *StaleError unless gen, a sealed record's
// generation for session id, is the latest the store keeps or the one
// after it (the store's write after that record's was lost to a crash, or
// failed); the latter brings the store up to gen. A record of a ralph
// older than the count (generation 0) is fresh while the store knows
// nothing newer.
func (g *Generations) CheckFresh(id string, gen uint64) error {
	latest, err := g.Latest(id)
	if err != nil {
		return err
	}
	switch gen {
	case latest:
		return nil
	case latest + 1:
		_ = g.record(id, gen)
		return nil
	}
	return &StaleError{Generation: gen, Latest: latest}
}

// atLeast brings the store to gen for session id, unless it says as much
// already.
func (g *Generations) atLeast(id string, gen uint64) error {
	latest, err := g.Latest(id)
	if err != nil || latest >= gen {
		return err
	}
	return g.record(id, gen)
}

// record makes the store say gen for session id, durably: a generation
// the store lost to a crash of the machine would let the record before
// it pass for fresh.
func (g *Generations) record(id string, gen uint64) error {
	path, err := g.path(id)
	if err != nil {
		return err
	}
	if err := g.fs.MkdirAll(g.dir, 0o700); err != nil {
		return fmt.Errorf("keep the seal generation of session %s: %w", id, err)
	}
	if err := WriteFileAtomic(g.fs, path, []byte(strconv.FormatUint(gen, 10)+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep the seal generation of session %s: %w", id, err)
	}
	return nil
}
