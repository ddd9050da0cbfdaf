package view

import (
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// PickerSize is how many sessions the --resume picker and chat's
// /resume offer: the newest.
const PickerSize = 10

// Resumable is the sessions the --resume picker and chat's /resume offer,
// newest first: a session opened and left without a word is not, there
// being nothing in it to go back to (memory.SessionEmpty).
func Resumable(fs afero.Fs, root string) ([]string, error) {
	all, err := memory.ListSessions(fs, root)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := len(all) - 1; i >= 0 && len(ids) < PickerSize; i-- {
		if !memory.SessionEmpty(fs, root, all[i]) {
			ids = append(ids, all[i])
		}
	}
	return ids, nil
}

// DescribeSession is a session in the picker, in two lines cut to the
// terminal's width: its first prompt, which is what a person remembers
// it by, then its id, age, turns, cost, mode, status and model.
func DescribeSession(fs afero.Fs, root, id string, now time.Time, width int) string {
	if width <= 0 {
		width = 80
	}
	// The number before the first line ("  NN) ") indents the second.
	const indent = "      "
	st, err := memory.LoadSessionState(fs, root, id)
	if err != nil {
		return id
	}
	prompt := memory.FirstPrompt(fs, root, id)
	if prompt == "" {
		prompt = "(no message)"
	}
	return eventwords.OneLine(prompt, width-len(indent)) + "\n" + indent + eventwords.OneLine(id+" · "+SessionRow(st, now), width-len(indent))
}
