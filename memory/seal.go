package memory

import (
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
type sealed struct {
	SessionID string     `json:"session_id"`
	Run       *RunConfig `json:"run"`
}

// Seal is the HMAC-SHA256 of st's restorable settings under key.
func Seal(key []byte, st State) string {
	b, err := json.Marshal(sealed{SessionID: st.SessionID, Run: st.Run})
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
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
func (s *Session) SealWith(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealKey = key
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
