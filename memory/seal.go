package memory

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"
)

// StateKeyFile is the name of the person's state key in ralph's user
// configuration directory (~/.config/ralph/state-key), which no sandboxed
// command can read or write.
const StateKeyFile = "state-key"

// ErrUnsealed is a saved session whose settings were not sealed with the
// person's state key: written by a command, edited outside ralph, or
// saved by a ralph older than the seal.
var ErrUnsealed = errors.New("the saved settings were changed outside ralph")

// StateKey reads the person's state key from dir, making it (0600, 32
// random bytes) on first use. person must be the person's own file
// system (rootfs.Person): the key lives outside every project, so that
// nothing a command writes into a project can seal settings ralph would
// then trust. Two ralphs making the key at once agree on one: the file
// is created exclusively, and a reader that finds it still short waits
// for the writer.
func StateKey(person afero.Fs, dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("no user configuration directory for the state key")
	}
	path := filepath.Join(dir, StateKeyFile)
	for range 100 {
		data, err := afero.ReadFile(person, path)
		if err == nil {
			key, derr := hex.DecodeString(strings.TrimSpace(string(data)))
			if derr == nil && len(key) == 32 {
				return key, nil
			}
			// A ralph beside this one is still writing it.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read the state key: %w", err)
		}
		if err := person.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("make the state key: %w", err)
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("make the state key: %w", err)
		}
		f, err := person.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("make the state key: %w", err)
		}
		_, werr := f.Write([]byte(hex.EncodeToString(key) + "\n"))
		if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
			_ = person.Remove(path)
			return nil, fmt.Errorf("make the state key: %w", err)
		}
		return key, nil
	}
	return nil, fmt.Errorf("the state key %s stays unreadable", path)
}

// sealed is what the seal covers: the settings a resume restores that
// name programs or files or loosen anything (the run configuration), and
// the session they belong to, so that one session's seal does not pass
// for another's.
//
// Generation makes the seal say "the latest ralph wrote", not only
// "ralph once wrote" (seal_generation.go); a record of a ralph older than
// it has none, and its seal stays what it was.
type sealed struct {
	SessionID  string     `json:"session_id"`
	Run        *RunConfig `json:"run"`
	Generation uint64     `json:"generation,omitempty"`
}

// Seal is the HMAC-SHA256 of st's restorable settings under key.
func Seal(key []byte, st State) string {
	b, err := json.Marshal(sealed{SessionID: st.SessionID, Run: st.Run, Generation: st.Generation})
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// SealNew seals a new session's first record: its first generation.
func SealNew(key []byte, st *State) {
	st.Generation = 1
	st.Seal = Seal(key, *st)
}

// sealedPart is what a new generation is counted on: the sealed settings
// without their generation.
func sealedPart(st State) []byte {
	b, _ := json.Marshal(sealed{SessionID: st.SessionID, Run: st.Run})
	return b
}

// CheckSeal reports ErrUnsealed unless st carries the seal its settings
// have under key.
func CheckSeal(key []byte, st State) error {
	if st.Seal == "" {
		return unsealedError("they carry no seal: saved by an older ralph, or written by a command")
	}
	want := Seal(key, st)
	if want == "" || !hmac.Equal([]byte(want), []byte(st.Seal)) {
		return unsealedError("their seal does not match them")
	}
	return nil
}

// unsealedError is ErrUnsealed saying only why, for the sentence it goes
// into.
type unsealedError string

func (e unsealedError) Error() string        { return string(e) }
func (e unsealedError) Is(target error) bool { return target == ErrUnsealed }

// SealWith makes every later save of the session seal its run settings
// with key: the settings ralph itself sets stay trusted, whichever part of
// ralph saves them, and the session a /clear starts (Next) is sealed too.
// gens (nil: none) keeps the latest generation of each, so that an older
// record is told from it (CheckFresh). A record sealed under the
// session's own id goes on in its generation; one that is not (a fork's
// copy, sealed under the session it copies) starts its own at the next
// save.
func (s *Session) SealWith(key []byte, gens *Generations) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seal = sealing{key: key, gens: gens}
	s.seal.adopt(s.state)
}

// sealing is a session's side of the seal: the key, the store of
// generations, and the record it sealed last.
type sealing struct {
	key  []byte
	gens *Generations
	// id, gen and part are the session, generation and sealed part
	// (sealedPart) of the record sealed last.
	id   string
	gen  uint64
	part []byte
	// pending is a generation written to a record whose store write
	// failed, tried again at the next save.
	pending uint64
	// broken says a new generation could not be kept in the store:
	// nothing more is sealed, and a resume of a later record refuses its
	// settings rather than trust them.
	broken bool
}

// adopt takes st, the record as it stands, for the one sealed last when
// its seal is the key's under its own id.
func (g *sealing) adopt(st State) {
	g.id, g.gen, g.part = "", 0, nil
	if g.key != nil && CheckSeal(g.key, st) == nil {
		g.id, g.gen, g.part = st.SessionID, st.Generation, sealedPart(st)
	}
}

// apply seals st before it is saved: in the generation sealed last while
// its sealed part is the same, else in a new one, the store brought to
// the one before it first (seal_generation.go). after, when not nil, is
// the store's write of the new generation, made once the record is
// durable.
func (g *sealing) apply(st *State) (after func()) {
	if g.broken {
		st.Seal, st.Generation = "", 0
		return nil
	}
	part := sealedPart(*st)
	if g.id != st.SessionID || !bytes.Equal(part, g.part) {
		next := uint64(1)
		if g.id == st.SessionID {
			next = g.gen + 1
		}
		if next > 1 && g.gens != nil {
			if err := g.gens.atLeast(st.SessionID, next-1); err != nil {
				g.broken = true
				st.Seal, st.Generation = "", 0
				return nil
			}
		}
		g.id, g.gen, g.part = st.SessionID, next, part
		if next > 1 {
			g.pending = next
		}
	}
	st.Generation = g.gen
	st.Seal = Seal(g.key, *st)
	if g.pending == 0 || g.gens == nil {
		return nil
	}
	id, gen := g.id, g.pending
	return func() {
		if g.gens.atLeast(id, gen) == nil {
			g.pending = 0
		}
	}
}

// LatestSealed is FindSession's latest session among those whose own
// record passes CheckSeal; it returns the ids of the newer sessions it
// passed over, so that the caller names them.
func LatestSealed(fs afero.Fs, root string, key []byte) (string, []string, error) {
	ids, err := ListSessions(fs, root)
	if err != nil {
		return "", nil, err
	}
	if len(ids) == 0 {
		return "", nil, NoSessionf("this project has no sessions yet")
	}
	var ok, skipped []string
	for _, id := range ids {
		st, err := LoadSessionState(fs, root, id)
		if err == nil && CheckSeal(key, st) != nil {
			skipped = append(skipped, id)
			continue
		}
		ok = append(ok, id)
	}
	if len(ok) == 0 {
		return "", skipped, NoSessionf("this project has no session saved by ralph for you")
	}
	return latestSession(fs, root, ok), skipped, nil
}
