//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package scripts

import (
	"context"

	"github.com/ralph-dev/ralph/scripts/terminal"
)

// askKey asks for a line where keys cannot be read one by one here (the
// Windows console reads keys through its own API, which ralph does not
// use yet): the caller reads the line, as on a terminal without cbreak
// mode.
func (q *questions) askKey(ctx context.Context, question, prompt string, _ terminal.KeyQuestion, bell bool) (string, error) {
	return q.ask(ctx, question, prompt, bell)
}
