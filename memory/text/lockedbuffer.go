package text

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that one goroutine may read while others
// write to it, such as a child process's output or an approver's prompt
// that a test polls. The zero value is ready to use.
type LockedBuffer struct {
	// Limit, when above zero, is how many bytes are kept: the rest is
	// dropped, yet accepted, so that a program writing without end
	// neither fills ralph's memory nor stops on a full pipe.
	Limit int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, up to Limit; it never fails.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Limit <= 0 {
		return l.b.Write(p)
	}
	if room := l.Limit - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
