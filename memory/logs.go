package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/afero"
)

// Log names inside a session directory, appended one JSON object a line.
const (
	EventsLog    = "events"
	ErrorsLog    = "errors"
	DecisionsLog = "decisions"
)

// ErrorRecord is one line of errors.jsonl: something that went wrong,
// whether or not the run recovered from it.
type ErrorRecord struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"` // model, retry, tool, persist, recovery
	Turn     int       `json:"turn,omitempty"`
	ToolName string    `json:"tool_name,omitempty"`
	Message  string    `json:"message"`
}

// DecisionRecord is one line of decisions.jsonl: a choice that shaped the
// run (a task picked, a retry, a breaker opened, a person's answer, an
// approval, an agent's own choice) and why it was made. Detail says what
// was decided, Reason why; Confidence (0 to 1) and Alternatives are there
// when the one deciding weighed them, as an agent's record_decision does.
// Lines written before reasons were recorded have a kind and a detail
// only, and read as such.
type DecisionRecord struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Turn   int       `json:"turn,omitempty"`
	Task   string    `json:"task,omitempty"`
	Detail string    `json:"detail"`
	Reason string    `json:"reason,omitempty"`
	// Agent is the agent that decided or whose run the decision is
	// about ("main" for the coordinator, "a3" for a child); "" is the
	// loop, or a record older than the field.
	Agent string `json:"agent,omitempty"`
	// By is who decided: "" for ralph itself, DecidedByPerson for an
	// answer the person gave, DecidedByAgent for a model's record_decision.
	By           string   `json:"by,omitempty"`
	Confidence   *float64 `json:"confidence,omitempty"`
	Alternatives []string `json:"alternatives,omitempty"`
	// Tokens and DurationMS are what the work decided on cost, where it
	// is a piece of work of its own (a review).
	Tokens     int   `json:"tokens,omitempty"`
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// Who made a decision (DecisionRecord.By).
const (
	DecidedByPerson = "person"
	DecidedByAgent  = "agent"
)

// ReadJSONL decodes every line of a session log into T. Unparsable lines
// (a torn final append) are counted in bad rather than failing the read, so
// a report of a crashed run still shows everything that was written.
func ReadJSONL[T any](fs afero.Fs, path string) (recs []T, bad int, err error) {
	bad, err = EachJSONL(fs, path, nil, func(v T) { recs = append(recs, v) })
	return recs, bad, err
}

// maxLogLine bounds one line of a session log that ralph decodes.
const maxLogLine = 64 << 20

// EachJSONL decodes the lines of a session log that hold one of marks
// (every line when there are none), one at a time, and hands each record
// to fn: what it holds at once is one line, however long a run made the
// log (a 10,000-task run's events.jsonl is tens of megabytes), and a line
// without a mark costs a scan, not a decode. Unparsable lines are counted
// in bad, as ReadJSONL counts them; a missing log holds nothing.
func EachJSONL[T any](fs afero.Fs, path string, marks []string, fn func(T)) (bad int, err error) {
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), maxLogLine)
	want := make([][]byte, len(marks))
	for i, m := range marks {
		want[i] = []byte(m)
	}
	for sc.Scan() {
		if len(marks) > 0 && !slices.ContainsFunc(want, func(m []byte) bool { return bytes.Contains(sc.Bytes(), m) }) {
			continue
		}
		var v T
		if json.Unmarshal(sc.Bytes(), &v) != nil {
			bad++
			continue
		}
		fn(v)
	}
	if err := sc.Err(); err != nil {
		return bad, fmt.Errorf("read %s: %w", path, err)
	}
	return bad, nil
}

// LogPath is the path of a session log.
func LogPath(root, id, name string) string {
	return filepath.Join(SessionDir(root, id), name+".jsonl")
}
