package repl

import "github.com/ralph-dev/ralph/coordinator/eventwords"

// thinking follows the main agent's reasoning for the status line and
// folds it to one line once the answer starts: the one-shot progress
// keeps the same eventwords.Thinking, so both say it the same way.
type thinking = eventwords.Thinking
