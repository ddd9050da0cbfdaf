//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package scripts

import "context"

// askKey asks for a line where keys cannot be read one by one here (the
// Windows console reads keys through its own API, which ralph does not
// use yet): the answer is the line's first letter, as on a terminal
// without cbreak mode.
func (q *questions) askKey(ctx context.Context, question, prompt, keys string, bell bool) (string, error) {
	return q.ask(ctx, question, prompt, bell)
}
