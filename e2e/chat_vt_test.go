package e2e

import termvt "github.com/ralph-dev/ralph/e2e/vt"

// vt is the terminal model of package e2e/vt, as the chat tests call it.
type vt struct{ *termvt.Screen }

func newVT(cols, rows int) *vt { return &vt{termvt.New(cols, rows)} }

func (v *vt) write(p []byte)     { _, _ = v.Write(p) }
func (v *vt) text() string       { return v.Text() }
func (v *vt) cursorLine() string { return v.CursorLine() }
