package e2e

import (
	"sync"
	"testing"
)

// streamGate holds a stand-in's stream where its Hold calls Wait, while a
// test resizes the window under it. A test that fails while the gate is
// held must still open it: httptest's Close waits for every handler, and a
// handler waiting at a held gate never ends (CI sat 69 minutes there when
// a helper failed between a Lock and its Unlock).
type streamGate struct {
	t    *testing.T
	once sync.Once
	mu   sync.Mutex
	shut chan struct{} // closed while the gate is held, nil while it is open
}

func newStreamGate(t *testing.T) *streamGate { return &streamGate{t: t} }

// Wait returns at once while the gate is open, and when it opens while it
// is held.
func (g *streamGate) Wait() {
	g.mu.Lock()
	ch := g.shut
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// Hold makes the next Waits wait. The first Hold registers the opening as
// a cleanup: it is registered after the stand-in's Close, so it runs first.
func (g *streamGate) Hold() {
	g.once.Do(func() { g.t.Cleanup(g.Open) })
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

// Open lets every waiting stream go on; opening an open gate does nothing.
func (g *streamGate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}
