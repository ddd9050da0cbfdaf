package sandbox

import (
	"fmt"
	"strings"
)

// UndoneNotes are the lines that tell the model what the nested guard
// took back after a step, each naming what set the key: by is the step,
// "this command" or "this call of write_file (gd/config)". A key found in
// a repository that appeared in the same step is said to be of a
// repository the step made, since what wrote the key may be an earlier
// step that wrote the file before it was a repository's.
func UndoneNotes(us []Undone, by string) []string {
	var notes []string
	for _, u := range us {
		switch {
		case u.Note != "":
			notes = append(notes, "[ralph: "+u.Note+"]")
		case u.Made:
			notes = append(notes, fmt.Sprintf("[ralph: the sandbox took back %s in %s, of a repository that appeared during %s: git would run it outside the sandbox]",
				strings.Join(u.Keys, ", "), u.File, by))
		default:
			notes = append(notes, fmt.Sprintf("[ralph: the sandbox took back %s in %s, which %s set: git would run it outside the sandbox]",
				strings.Join(u.Keys, ", "), u.File, by))
		}
	}
	return notes
}

// EndNote is the one line that tells the person what the nested guard's
// last check, as the session ended, took back: what a process of the
// session wrote after the check of its last step.
func EndNote(us []Undone) string {
	var parts []string
	for _, u := range us {
		if u.Note != "" {
			parts = append(parts, u.Note)
			continue
		}
		parts = append(parts, fmt.Sprintf("took back %s in %s", strings.Join(u.Keys, ", "), u.File))
	}
	return "as the session ended, the sandbox " + strings.Join(parts, "; ") +
		", which changed after the last check of the model's steps: git would run it outside the sandbox"
}
