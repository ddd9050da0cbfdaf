package workers

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// envFileName is the CLAUDE_ENV_FILE's name in the directory NewEnvFile
// makes for it.
const envFileName = "env"

// maxEnvFile bounds what ralph reads of a CLAUDE_ENV_FILE: a few exports
// take a few hundred bytes, and a hook that writes without end cannot
// fill ralph's memory.
const maxEnvFile = 64 << 10

// NewEnvFile makes the CLAUDE_ENV_FILE of one firing of SessionStart: an
// empty file in a new directory (mode 0700, named at random) of the
// temporary directory the session's hooks write in, since a sandboxed
// hook can write nowhere else outside the project, and the project is the
// model's. ralph reads it once, right after the hooks end, and removes it
// (TakeEnvFile), before any later command of the model's runs: what a
// command writes there afterwards is never read. The file is made by
// ralph, so a link planted at the name cannot be followed; a hook sees
// only its own path.
func (w *Workspace) NewEnvFile() (string, error) {
	ws := w
	if w.policy.Confines() && !w.policy.Network {
		// Hooks start with the network on (StartHook), in that variant's
		// temporary directory.
		var err error
		if ws, err = w.variant("network", func(o *Options) { o.NoNetwork = false }); err != nil {
			return "", err
		}
	}
	base, err := ws.tempBase()
	if err != nil {
		return "", err
	}
	if w.policy.Confines() && w.policy.Mode == sandbox.ReadOnly {
		return "", errors.New("a read-only sandbox lets no hook write the environment file")
	}
	dir, err := os.MkdirTemp(base, "ralph-env-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, envFileName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	_ = f.Close()
	return path, nil
}

// TakeEnvFile reads the CLAUDE_ENV_FILE at path (NewEnvFile), which must
// still be a regular file of at most 64 KiB and not a link, and removes
// its directory, whatever it held.
func TakeEnvFile(path string) ([]byte, error) {
	defer func() { _ = os.RemoveAll(filepath.Dir(path)) }()
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("the environment file %s is no longer a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, fmt.Errorf("the environment file %s was replaced while ralph read it", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEnvFile {
		return nil, fmt.Errorf("the environment file holds more than %d KiB", maxEnvFile>>10)
	}
	return data, nil
}
