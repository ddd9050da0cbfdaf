package git

import (
	"bufio"
	"bytes"
	"encoding/json"
	"time"
)

// LogName is the session log (checkpoints.jsonl in the session's
// directory) that links checkpoints to turns and tasks.
const LogName = "checkpoints"

// Checkpoint kinds in the log.
const (
	KindBaseline = "baseline" // the session's start
	KindResume   = "resume"   // a resumed session: what changed while ralph was away
	KindTurn     = "turn"     // after a turn of the main agent
	KindTask     = "task"     // after a task attempt of the task loop
	KindUndo     = "undo"     // after ralph undo put files back
)

// Entry is one line of the checkpoint log.
type Entry struct {
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`
	// Turn is the model step (turn) a turn entry follows; Request the
	// person's request it belongs to, named by the session turn it began
	// at, so that every step of one request is taken back together.
	// Entries older than Request have none: each is its own request.
	Turn    int    `json:"turn,omitempty"`
	Request int    `json:"request,omitempty"`
	Task    string `json:"task,omitempty"`
	// Undone names the entry (its ref) an undo took back.
	Undone string `json:"undone,omitempty"`
	// Git is the person's HEAD and branches when the checkpoint was
	// taken (nil in logs older than it).
	Git *Heads `json:"git,omitempty"`
	Checkpoint
}

// ParseLog reads a checkpoint log; damaged lines (a torn last line after
// a crash) are skipped.
func ParseLog(data []byte) []Entry {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Commit != "" {
			out = append(out, e)
		}
	}
	return out
}
