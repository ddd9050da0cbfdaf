package workers

import (
	"context"
	"errors"
	"time"
)

// EditorFiles is an editor's view of the project's files (ACP's fs/read_text_file and fs/write_text_file):
// what the file tools read and write instead of the disk when a client offers it.
type EditorFiles interface {
	ReadTextFile(ctx context.Context, abs string) (string, error)
	WriteTextFile(ctx context.Context, abs, content string) error
}

// EditorOffers is what an EditorFiles may also tell: whether the editor
// offers reading files (write false) or writing them (write true). ACP
// names its two methods apart (fs.readTextFile, fs.writeTextFile), and an
// editor may offer one alone; the method it does not offer goes to the
// disk, as with no editor. An EditorFiles without it offers both.
type EditorOffers interface {
	Offers(write bool) bool
}

// ErrEditorNoFile is what an EditorFiles' ReadTextFile returns when the
// editor has no such file: the file tools answer as the disk answers a
// missing file.
var ErrEditorNoFile = errors.New("the editor has no such file")

// EditorWait bounds each call of an editor: an editor that neither
// answers nor fails within it fails the tool's call, which says so.
const EditorWait = 30 * time.Second
