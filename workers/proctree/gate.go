package proctree

import "sync"

// gate keeps ralph from starting a process while it holds the ones it
// started still (Freeze): a process started after Freeze's walk would
// run, unseen, through the very window the freeze closes. Starting takes
// it shared, a freeze exclusively, so freezes are also serialised: one
// thaw can never release another's hold.
var gate sync.RWMutex

// Starting is called by every place ralph starts a process of the
// model's (a command, a server, the sandbox's helper) around the start;
// it waits while a freeze holds. The returned func ends the start.
func Starting() (done func()) {
	gate.RLock()
	return gate.RUnlock
}
