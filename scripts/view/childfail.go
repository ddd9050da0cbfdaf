package view

import "sync"

// ChildFailures keeps a child agent's failure to one line on a terminal.
// A child that fails ends with its own error, then its agent_finished
// event saying why, then the error result of the spawn_agent call that
// started it: three lines of the same sentence. A face shows the
// agent_finished line, which names the agent, and asks Told before showing
// the call's error result. Its zero value is ready to use, by any
// goroutine.
type ChildFailures struct {
	mu   sync.Mutex
	told map[string]bool
}

// Failed notes that the child started by the call callID failed and that
// its agent_finished line said why.
func (f *ChildFailures) Failed(callID string) {
	if callID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.told == nil {
		f.told = map[string]bool{}
	}
	f.told[callID] = true
}

// Told reports whether the failure behind the call callID's error result
// was shown already; it forgets the call, which has no other result.
func (f *ChildFailures) Told(callID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	told := f.told[callID]
	delete(f.told, callID)
	return told
}
