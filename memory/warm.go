package memory

import (
	"encoding/json"
	"io"
	"sync"
)

var warmOnce sync.Once

// WarmCodecs builds encoding/json's codecs for the records a session
// reads and writes as it starts (its state, read back from the last
// session by recovery and written for the new one; the lock's record;
// the lines of messages.jsonl) on a goroutine of its own, once per
// process, and returns at once. Built on the first use instead, they lay
// on the one goroutine that opens the project, on the way to a
// one-shot's first request: about a tenth of that goroutine's processor
// time there. encoding/json shares a struct's fields between its encoder
// and its decoder, so encoding a zero value of each serves the reads
// too. The goroutine ends by itself, and nothing waits for it: a codec it
// has not finished is built by whoever needs it first, as before.
func WarmCodecs(more ...any) {
	warmOnce.Do(func() {
		go func() {
			enc := json.NewEncoder(io.Discard)
			for _, v := range append([]any{State{}, LockInfo{}, seqLine{}, AgentMessage{}}, more...) {
				_ = enc.Encode(v)
			}
		}()
	})
}
