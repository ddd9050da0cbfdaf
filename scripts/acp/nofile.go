package acp

import "github.com/ralph-dev/ralph/workers"

// errNoFile is what ReadTextFile wraps when the editor has no such file.
var errNoFile = workers.ErrEditorNoFile

// The client's files are the workers' editor seam.
var _ workers.EditorFiles = (*ClientFiles)(nil)
