//go:build !linux

package proctree

// Held is a freeze. Without /proc there is no tree to walk: a freeze only
// holds the gate, so ralph starts no process while it holds, and the
// caller refuses what a process ralph started could race (see
// workers/editorhold_other.go).
type Held struct{ done bool }

// Freeze holds the gate: ralph starts no process until Thaw.
func Freeze() (*Held, error) {
	gate.Lock()
	return &Held{}, nil
}

// Thaw releases the gate; only its first call does anything.
func (h *Held) Thaw() {
	if h == nil || h.done {
		return
	}
	h.done = true
	gate.Unlock()
}
