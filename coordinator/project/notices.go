package project

import "sync"

// notices is the one door every notice of the project's goes through
// (Options.Notify, the workspace's, the hooks', the MCP servers'): to the
// opener's Notify until a face attaches, then to the face's, which prints
// it on a line of its own above its status line. Notices the workspace
// said at a command went straight to standard error before, over the
// one-shot's and ralph run's status line ("⠋ working on t1 · 0s ·
// 1 agentralph: commands run without …"), and nowhere at all in chat,
// whose opener collected them only until the shell started (issue 68).
type notices struct {
	mu sync.Mutex
	to func(string)
}

// say passes a notice on to whoever shows notices now.
func (n *notices) say(s string) {
	n.mu.Lock()
	to := n.to
	n.mu.Unlock()
	if to != nil {
		to(s)
	}
}

// route makes to show notices from now on and returns what did before;
// a nil to keeps the one there.
func (n *notices) route(to func(string)) (prev func(string)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	prev = n.to
	if to != nil {
		n.to = to
	}
	return prev
}
