package memory

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/afero"
)

// The marks of the progress file (RALPH_PROGRESS.md): each task's entry
// ends in a mark saying which completion it records, which AppendProgress
// writes and a crashed run's recovery (RecoverInProgress, with the plan
// formats) reads.

// ReadProgress is the progress file's text, whole ("" when there is
// none).
func ReadProgress(fs afero.Fs, root string) (string, error) {
	doc, _, err := loadDoc(nil, fs, filepath.Join(root, ProgressFile), 0, false)
	if err != nil {
		return "", err
	}
	return doc.Content, nil
}

// progressKey is the part of a task's progress mark that says which
// completion it records: the task and its attempt, not the session.
func progressKey(taskID string, attempt int) string {
	return "<!-- ralph:progress task=" + taskID + " attempt=" + strconv.Itoa(attempt)
}

// progressMark is the invisible mark that ends a task's entry.
func progressMark(taskID string, attempt int, sessionID string) string {
	m := progressKey(taskID, attempt)
	if sessionID != "" {
		m += " session=" + sessionID
	}
	return m + " -->"
}

// HasProgressMark reports whether s holds the mark of taskID's attempt.
// The key must end at a space ("attempt=1" is not "attempt=12").
func HasProgressMark(s, taskID string, attempt int) bool {
	key := progressKey(taskID, attempt)
	for {
		i := strings.Index(s, key)
		if i < 0 {
			return false
		}
		s = s[i+len(key):]
		if strings.HasPrefix(s, " ") {
			return true
		}
	}
}

// progressTail is how much of the end of RALPH_PROGRESS.md AppendProgress
// reads to find an entry already written: the newest entries, where a
// repeated write of one (a retried Temporal activity, complete_task called
// again after a failure) finds it. A bounded read keeps a task's cost the
// same whether the file holds ten entries or ten thousand.
const progressTail = 64 << 10

// unmark keeps the text of an entry from holding what reads as a task's
// mark: a summary the model wrote must not make recovery take another
// task for done, nor keep its entry from being written.
func unmark(s string) string {
	return strings.ReplaceAll(s, "<!-- ralph:progress", "&lt;!-- ralph:progress")
}
