// Package report holds ralph's read-only session commands: status, the
// list of sessions across projects, logs, analysis, comparison and the final
// report. Each returns a struct (for --json) and formats it as text or
// markdown for people. Nothing here calls a model or writes anything except
// the final report itself.
package report

import (
	"encoding/json"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// readEvents decodes a session's events.jsonl into the coordinator's own
// event type, which reads logs of older and newer ralphs alike: a field a
// newer one added is ignored, one an older one did not write is zero, and
// keys match case-insensitively (a retry written with Go's field names
// still reads). bad counts lines that did not parse (a torn last append,
// or damage) so callers can say so.
func readEvents(fs afero.Fs, root, id string) (evs []event.Event, bad int, err error) {
	return memory.ReadJSONL[event.Event](fs, memory.LogPath(root, id, memory.EventsLog))
}

// mainAgent says whether an event belongs to the coordinator itself rather
// than a child agent; logs written before agent ids existed have none.
func mainAgent(e event.Event) bool {
	return e.AgentID == "" || e.AgentID == event.MainAgent
}

// toolArgs is a tool call's input as a JSON object. A model may send
// arguments that are not valid JSON, which a writer can only keep as a JSON
// string, so a string holding an object is unwrapped too.
func toolArgs(e event.Event) json.RawMessage {
	in := e.ToolArgs
	var s string
	if len(in) > 0 && in[0] == '"' && json.Unmarshal(in, &s) == nil {
		return json.RawMessage(s)
	}
	return in
}

// toolPath is the "path" argument of a tool call, if it has one.
func toolPath(e event.Event) string {
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(toolArgs(e), &args) != nil {
		return ""
	}
	return args.Path
}
