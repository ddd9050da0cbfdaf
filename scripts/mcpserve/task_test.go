package mcpserve

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/contract"
)

// TestReadStream reads a one-shot's stream-json: the files of every
// files_changed event, once each, and the result line; lines it does not
// know (a schema version, a new event) are passed over.
func TestReadStream(t *testing.T) {
	out := `{"type":"init","session_id":"s1","schema_version":1}
{"type":"files_changed","files":[{"path":"a.go","added":1,"deleted":0},{"path":"b.go","added":2,"deleted":0}]}
not json
{"type":"files_changed","files":[{"path":"a.go","added":1,"deleted":0}]}
{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":2,"duration_ms":5,"total_cost_usd":0.25,"permission_denials":[{"tool_name":"run_command","command":"rm -rf x"}]}
`
	res, ok := readStream([]byte(out))
	if !ok {
		t.Fatal("no result found")
	}
	if res.Answer != "done" || res.SessionID != "s1" || res.NumTurns != 2 || res.CostUSD == nil || *res.CostUSD != 0.25 || !slices.Equal(res.FilesChanged, []string{"a.go", "b.go"}) {
		t.Fatalf("result = %+v", res)
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].Command != "rm -rf x" {
		t.Fatalf("denials = %+v", res.PermissionDenials)
	}
	if _, ok := readStream([]byte("ralph: no model configured\n")); ok {
		t.Fatal("a result was found in output without one")
	}
}

// TestReadStreamReadsTheOneShotsOwnResultLine: the task tool reads the
// result line through the type the one-shot writes it with, so every
// member it takes survives the trip, a refused call's arguments as an
// object; and a ralph run's members (tasks) do not stop it.
func TestReadStreamReadsTheOneShotsOwnResultLine(t *testing.T) {
	cost := 0.5
	line, err := json.Marshal(contract.ResultLine{Type: "result", Subtype: "error_max_turns", IsError: true, Result: "stopped",
		SessionID: "s2", NumTurns: 3, DurationMS: 7, TotalCostUSD: &cost, Error: "e", Tasks: &memory.TaskCounts{},
		PermissionDenials: []contract.Denial{{ToolName: "run_command", Command: "rm x"}, {ToolName: "mcp__t__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	res, ok := readStream(append(line, '\n'))
	want := TaskResult{Answer: "stopped", IsError: true, Subtype: "error_max_turns", SessionID: "s2", FilesChanged: []string{},
		CostUSD: &cost, NumTurns: 3, DurationMS: 7, Error: "e",
		PermissionDenials: []Denial{{ToolName: "run_command", Command: "rm x"}, {ToolName: "mcp__t__echo", Arguments: map[string]any{"text": "hi"}}}}
	if !ok || !reflect.DeepEqual(res, want) {
		t.Fatalf("read %+v\nwant %+v", res, want)
	}
}

// TestLineWriter hands over whole lines however the output is cut, and
// keeps every byte.
func TestLineWriter(t *testing.T) {
	var buf bytes.Buffer
	var lines []string
	w := &lineWriter{buf: &buf, onLine: func(l []byte) { lines = append(lines, string(l)) }}
	for _, part := range []string{`{"a":`, "1}\n{\"b\"", ":2}\n\n", "tail"} {
		if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if want := []string{`{"a":1}`, `{"b":2}`, ""}; !slices.Equal(lines, want) {
		t.Fatalf("lines = %q, want %q", lines, want)
	}
	if buf.String() != "{\"a\":1}\n{\"b\":2}\n\ntail" {
		t.Fatalf("kept %q", buf.String())
	}
}
