package memory

import (
	"encoding/json"
	"testing"
)

// The warm-up encodes zero values and drops the result: each must encode
// without error, or the warm-up would warm nothing for it.
func TestWarmedRecordsEncodeFromZero(t *testing.T) {
	for _, v := range []any{State{}, LockInfo{}, seqLine{}, AgentMessage{}} {
		if _, err := json.Marshal(v); err != nil {
			t.Errorf("%T: %v", v, err)
		}
	}
	WarmCodecs()
	WarmCodecs() // once per process: a second call starts nothing
}
