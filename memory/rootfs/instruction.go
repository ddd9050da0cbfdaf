package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"
)

// ErrLinkOut says an instruction file is a link to a file outside the
// project, which ralph leaves out of the prompt unless the person listed
// its target in their config (instruction_links).
var ErrLinkOut = errors.New("a link out of the project")

// LinkOutError names the instruction file and where it points.
type LinkOutError struct {
	Name, Target string
}

func (e *LinkOutError) Error() string {
	return fmt.Sprintf("%s is %s (to %s)", e.Name, ErrLinkOut, e.Target)
}

func (e *LinkOutError) Unwrap() error { return ErrLinkOut }

// ReadInstruction reads an instructions file (AGENTS.md, CLAUDE.md, …) of
// the project, at most limit bytes. A link inside the project is followed
// (CLAUDE.md -> AGENTS.md). A link out of it is read only when its target
// is among allowed (paths, "~/" for the home directory, as the person
// wrote them in instruction_links); otherwise the error is a
// *LinkOutError, and nothing of the target is read: a command may have
// linked CLAUDE.md to a key it cannot read itself.
func ReadInstruction(fsys afero.Fs, name string, allowed []string, limit int64) ([]byte, error) {
	limit = instructionLimit(limit)
	if _, ok := fsys.(*Fs); !ok {
		return ReadHead(fsys, name, limit)
	}
	data, err := ReadHead(fsys, name, limit)
	if !errors.Is(err, ErrLinkOut) {
		return data, err
	}
	target, terr := filepath.EvalSymlinks(name)
	if terr != nil {
		return nil, err
	}
	return readListed(name, target, allowed, limit)
}

// ReadListed reads a file outside the project that an instructions file
// imports (`@~/notes.md`), at most limit bytes, only when its target is
// among allowed, as a link out of the project is (ReadInstruction): the
// project's instructions are text the model may have written, and an
// import must not carry the person's keys into the prompt. Otherwise the
// error is a *LinkOutError and nothing of the file is read.
func ReadListed(name string, allowed []string, limit int64) ([]byte, error) {
	target, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	return readListed(name, target, allowed, instructionLimit(limit))
}

// readListed reads target, where name leads, through the person's door
// when the person listed it in allowed, as the small reader reads any
// file: a FIFO listed there does not hang ralph either.
func readListed(name, target string, allowed []string, limit int64) ([]byte, error) {
	for _, a := range allowed {
		if sameTarget(expandHome(a), target) {
			return ReadHead(Person(), target, limit)
		}
	}
	return nil, &LinkOutError{Name: name, Target: target}
}

// instructionLimit is limit, or a MiB when the caller gave none.
func instructionLimit(limit int64) int64 {
	if limit <= 0 {
		return 1 << 20
	}
	return limit
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

func sameTarget(allowed, target string) bool {
	if !filepath.IsAbs(allowed) {
		return false
	}
	if filepath.Clean(allowed) == target {
		return true
	}
	r, err := filepath.EvalSymlinks(allowed)
	return err == nil && r == target
}
