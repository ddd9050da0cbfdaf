package workers

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
)

// MaxServerFile is the most of a file a language server is sent: a
// source file larger than this is not one a server reads usefully.
const MaxServerFile = 8 << 20

// ServerFiles reads the project's files for its language servers
// (workers/lsp) through the file tools' door: beneath the root, the kept
// paths refused. It reads the disk; where an editor holds the files
// (Options.Editor, once the editor route is merged) the text it sends
// should come from the editor's route as the file tools' does.
type ServerFiles struct{ W *Workspace }

func (f ServerFiles) open(abs string) (io.ReadCloser, error) {
	rel, err := filepath.Rel(f.W.Root(), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, ErrOutsideRoot
	}
	if f.W.Kept(abs) {
		return nil, errors.New("a kept path")
	}
	root, err := f.W.OpenRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.OpenFile(rel)
}

// ReadFile is the text of the file at abs, at most MaxServerFile bytes.
func (f ServerFiles) ReadFile(_ context.Context, abs string) (string, error) {
	file, err := f.open(abs)
	if err != nil {
		return "", err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, MaxServerFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxServerFile {
		return "", errors.New("too large for a language server")
	}
	return string(b), nil
}

// Exists reports whether abs is a regular file of the project (a
// server's root marker).
func (f ServerFiles) Exists(abs string) bool {
	file, err := f.open(abs)
	if err != nil {
		return false
	}
	file.Close()
	return true
}
