package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/cobra"
)

// The claude shape is checked against Claude Code's own lines, recorded
// from claude 2.1.197 (`claude -p --output-format stream-json
// --verbose`) in testdata/agents/samples/claude_*.jsonl: what keys each
// kind of line has and what JSON type each key's value is are read from
// those lines, never written down here, so a sample recorded from a
// later claude is all it takes to check the shape against that one.

// jsonShape is what the recorded values at one place have in common: the
// JSON kinds they take, and, of objects, which keys all of them have
// (required), which any has (known) and the shape under each key; of
// arrays, the shape of their elements by the elements' "type".
type jsonShape struct {
	kinds    map[string]bool
	seen     int
	keyCount map[string]int
	keys     map[string]*jsonShape
	elems    map[string]*jsonShape
}

func newShape() *jsonShape {
	return &jsonShape{kinds: map[string]bool{}, keyCount: map[string]int{}, keys: map[string]*jsonShape{}, elems: map[string]*jsonShape{}}
}

// dictionaries are the keys whose objects are keyed by what a run had,
// not by Claude Code's schema: a tool's arguments and a model's name.
// Their values are compared, not their keys.
var dictionaries = []string{"input", "tool_input", "modelUsage"}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// add learns one recorded value.
func (s *jsonShape) add(name string, v any) {
	s.kinds[jsonKind(v)] = true
	switch v := v.(type) {
	case map[string]any:
		if slices.Contains(dictionaries, name) {
			return
		}
		s.seen++
		for k, x := range v {
			s.keyCount[k]++
			if s.keys[k] == nil {
				s.keys[k] = newShape()
			}
			s.keys[k].add(k, x)
		}
	case []any:
		for _, x := range v {
			m, _ := x.(map[string]any)
			t, _ := m["type"].(string)
			if s.elems[t] == nil {
				s.elems[t] = newShape()
			}
			s.elems[t].add("", x)
		}
	}
}

// check reports where v, one of ralph's values at path, differs from
// the recorded values: a kind they never take, a key all of them have
// that v lacks, a key none of them has.
func (s *jsonShape) check(path, name string, v any, errs *[]string) {
	kind := jsonKind(v)
	if !s.kinds[kind] {
		*errs = append(*errs, path+" is "+kind+", claude's is "+strings.Join(sortedKeys(s.kinds), " or "))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if slices.Contains(dictionaries, name) {
			return
		}
		for k, n := range s.keyCount {
			if _, ok := v[k]; !ok && n == s.seen {
				*errs = append(*errs, path+" lacks "+k)
			}
		}
		for k, x := range v {
			if s.keys[k] == nil {
				*errs = append(*errs, path+" has "+k+", which claude's never has")
				continue
			}
			s.keys[k].check(path+"."+k, k, x, errs)
		}
	case []any:
		for _, x := range v {
			m, _ := x.(map[string]any)
			t, _ := m["type"].(string)
			if e := s.elems[t]; e != nil {
				e.check(path+"[type="+t+"]", "", x, errs)
			} else if len(s.elems) > 0 {
				*errs = append(*errs, path+" has an element of type "+t+", which claude's never has")
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lineKind is the kind of a stream line, for comparing like with like:
// its type, with a system line's subtype and whether a result is a
// success (SDKResultSuccess) or not (SDKResultError).
func lineKind(line map[string]any) string {
	kind, _ := line["type"].(string)
	switch kind {
	case "system":
		sub, _ := line["subtype"].(string)
		kind += "/" + sub
	case "result":
		if line["subtype"] == "success" {
			kind += "/success"
		} else {
			kind += "/error"
		}
	}
	return kind
}

// recordedShapes are the shapes of every kind of line in the recorded
// claude output.
func recordedShapes(t *testing.T) map[string]*jsonShape {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "agents", "samples", "claude_*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded claude output: %v", err)
	}
	shapes := map[string]*jsonShape{}
	for _, f := range files {
		for _, line := range jsonLines(t, f) {
			k := lineKind(line)
			if shapes[k] == nil {
				shapes[k] = newShape()
			}
			shapes[k].add("", line)
		}
	}
	return shapes
}

func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseLines(t, b)
}

func parseLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		out = append(out, m)
	}
	return out
}

// claudeRun is what a one-shot in the claude shape prints for events
// and its result.
func claudeRun(t *testing.T, events []event.Event, res event.Result) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	o := &OneShot{Format: FormatStreamJSON, Stdout: &out, Stderr: &bytes.Buffer{}, Cwd: "/p", Model: "m"}
	o.Shape, o.Version = ShapeClaude, "1.0"
	o.ToolNames = func() []string { return []string{"read_file", "run_command"} }
	o.Start()
	for _, ev := range events {
		o.Handle(ev)
	}
	o.Finish(res)
	return parseLines(t, out.Bytes())
}

// TestClaudeShapeHasTheRecordedKeys: every line ralph prints in the
// claude shape has the keys claude's lines of the same kind all have,
// no key claude's never have, and each value of a JSON type claude's
// take there: the init, the model's text and tool_use, a tool_result
// that worked and one that failed, and a result of each kind.
func TestClaudeShapeHasTheRecordedKeys(t *testing.T) {
	shapes := recordedShapes(t)
	cost := 0.5
	turn := []event.Event{
		{Type: event.SessionStarted, SessionID: "s1", Model: "m", Text: "do it"},
		{Type: event.UserMessage, AgentID: "main", Text: "do it"},
		{Type: event.TurnStarted, AgentID: "main", Turn: 1},
		{Type: event.TextDelta, AgentID: "main", Turn: 1, Text: "Loo"},
		{Type: event.Assistant, AgentID: "main", Turn: 1, Text: "Looking."},
		{Type: event.ToolCall, AgentID: "main", Turn: 1, ToolID: "c1", ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"ls"}`)},
		{Type: event.ToolResult, AgentID: "main", Turn: 1, ToolID: "c1", ToolName: "run_command", Output: "a.go", Time: time.Now()},
		{Type: event.ToolCall, AgentID: "main", Turn: 1, ToolID: "c2", ToolName: "read_file", ToolArgs: json.RawMessage(`not json`)},
		{Type: event.ToolResult, AgentID: "main", Turn: 1, ToolID: "c2", ToolName: "read_file", Output: "no such file", IsError: true},
		{Type: event.FilesChanged, AgentID: "main", Turn: 1, Text: "1 file changed"},
		{Type: event.Retry, AgentID: "main", Turn: 2, Retry: &event.RetryInfo{Attempt: 1, Reason: "HTTP 429"}},
		{Type: event.Assistant, AgentID: "main", Turn: 2, Text: "Done."},
	}
	usage := conversation.Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 40}
	runs := map[string][]map[string]any{
		"success": claudeRun(t, turn, event.Result{Subtype: event.SubtypeSuccess, Text: "Done.", SessionID: "s1", NumTurns: 2,
			Duration: time.Second, Usage: usage, CostUSD: &cost,
			Denied: []event.Denial{{Tool: "run_command", Command: "rm -rf x"}, {Tool: "mcp__t__echo", Args: json.RawMessage(`{"text":"hi"}`)}}}),
		"max turns":   claudeRun(t, turn, event.Result{Subtype: event.SubtypeMaxTurns, IsError: true, Text: "reached --max-turns 2", SessionID: "s1", NumTurns: 2}),
		"interrupted": claudeRun(t, turn[:7], event.Result{Subtype: event.SubtypeInterrupted, IsError: true, Text: "interrupted by SIGINT", SessionID: "s1"}),
		"api error": claudeRun(t, turn[:3], event.Result{Subtype: event.SubtypeExecutionError, IsError: true, SessionID: "s1",
			Err: &llm.Error{Kind: llm.ErrServer, Status: 500, Msg: "HTTP 500: boom"}}),
	}
	kinds := map[string]bool{}
	for name, lines := range runs {
		if lineKind(lines[0]) != "system/init" || lines[len(lines)-1]["type"] != "result" {
			t.Errorf("%s: the lines do not begin with the init and end with the result:\n%v", name, lines)
		}
		for i, line := range lines {
			k := lineKind(line)
			kinds[k] = true
			shape := shapes[k]
			if shape == nil {
				t.Errorf("%s: line %d is a %s line, which claude never printed: %v", name, i+1, k, line)
				continue
			}
			var errs []string
			shape.check(k, "", line, &errs)
			for _, e := range errs {
				t.Errorf("%s: line %d: %s", name, i+1, e)
			}
		}
	}
	for _, want := range []string{"system/init", "assistant", "user", "result/success", "result/error"} {
		if !kinds[want] {
			t.Errorf("no %s line was checked", want)
		}
	}
}

// TestClaudeShapeSaysWhatClaudeSays: the values claude's readers act on
// (the result's subtype, result and errors, the tool_use and
// tool_result's ids, the init's tools) are ralph's run's, in claude's
// words: a tool under Claude Code's name and input shape where it has
// one (write_file is Write with an absolute file_path), ralph's own
// otherwise; a child agent's lines name the spawn_agent call that
// started it as their parent_tool_use_id.
func TestClaudeShapeSaysWhatClaudeSays(t *testing.T) {
	lines := claudeRun(t, []event.Event{
		{Type: event.SessionStarted, SessionID: "s1", Model: "m"},
		{Type: event.Thinking, AgentID: "main", Turn: 1, Text: "hmm"},
		{Type: event.ToolCall, AgentID: "main", Turn: 1, ToolID: "c1", ToolName: "spawn_agent", ToolArgs: json.RawMessage(`{"task":"t"}`)},
		{Type: event.AgentSpawned, AgentID: "agent-1", ToolID: "c1", Text: "t"},
		{Type: event.Assistant, AgentID: "agent-1", Turn: 1, Text: "child's"},
		{Type: event.ToolResult, AgentID: "main", Turn: 1, ToolID: "c1", ToolName: "spawn_agent", Output: "child's"},
		{Type: event.ToolCall, AgentID: "main", Turn: 2, ToolID: "c2", ToolName: "write_file", ToolArgs: json.RawMessage(`{"path":"a.txt","content":"x"}`)},
		{Type: event.ToolCall, AgentID: "main", Turn: 2, ToolID: "c3", ToolName: "complete_task", ToolArgs: json.RawMessage(`{"summary":"s"}`)},
	}, event.Result{Subtype: event.SubtypeMaxTurns, IsError: true, Text: "reached --max-turns 1", SessionID: "s1", NumTurns: 1,
		Denied: []event.Denial{{Tool: "run_command", Command: "rm x"}}})
	got := func(i int, path ...string) any {
		var v any = lines[i]
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				v = x[0].(map[string]any)[p]
			}
		}
		return v
	}
	if len(lines) != 8 {
		t.Fatalf("%d lines:\n%v", len(lines), lines)
	}
	checks := []struct {
		v, want any
	}{
		{got(0, "tools"), []any{"Read", "Bash"}},
		{got(0, "permissionMode"), "default"},
		{got(1, "message", "content", "type"), "thinking"},
		{got(1, "message", "content", "thinking"), "hmm"},
		{got(2, "message", "content", "id"), "c1"},
		{got(2, "message", "content", "name"), "Task"},
		{got(3, "parent_tool_use_id"), "c1"},
		{got(3, "message", "content", "text"), "child's"},
		{got(4, "parent_tool_use_id"), nil},
		{got(4, "message", "content", "tool_use_id"), "c1"},
		{got(5, "message", "content", "name"), "Write"},
		{got(5, "message", "content", "input"), map[string]any{"file_path": "/p/a.txt", "content": "x"}},
		{got(6, "message", "content", "name"), "complete_task"},
		{got(6, "message", "content", "input"), map[string]any{"summary": "s"}},
		{got(7, "subtype"), "error_max_turns"},
		{got(7, "errors"), []any{"reached --max-turns 1"}},
		{got(7, "terminal_reason"), "max_turns"},
		{got(7, "permission_denials"), []any{map[string]any{"tool_name": "Bash", "tool_use_id": "", "tool_input": map[string]any{"command": "rm x"}}}},
	}
	for i, c := range checks {
		a, _ := json.Marshal(c.v)
		b, _ := json.Marshal(c.want)
		if string(a) != string(b) {
			t.Errorf("check %d: got %s, want %s", i, a, b)
		}
	}
	if _, ok := lines[7]["result"]; ok {
		t.Errorf("an error result has result, which claude's SDKResultError has not: %v", lines[7])
	}
}

// TestClaudeShapeFailsInClaudesWords: a one-shot that fails before it
// runs prints an init line and an error result, as claude does.
func TestClaudeShapeFailsInClaudesWords(t *testing.T) {
	var out bytes.Buffer
	o := &OneShot{Format: FormatStreamJSON, Stdout: &out, Stderr: &bytes.Buffer{}}
	o.Shape = ShapeClaude
	if code := o.Fail(ExitUsage, errors.New("no task given")); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	lines := parseLines(t, out.Bytes())
	if len(lines) != 2 || lineKind(lines[0]) != "system/init" || lines[1]["subtype"] != "error_during_execution" {
		t.Fatalf("lines = %v", lines)
	}
	if errs, _ := lines[1]["errors"].([]any); len(errs) != 1 || errs[0] != "no task given" {
		t.Errorf("errors = %v", lines[1]["errors"])
	}
}

// TestStreamShapeGoesWithStreamJSON: --stream-shape claude is refused
// with any other output format, and an unknown shape is refused.
func TestStreamShapeGoesWithStreamJSON(t *testing.T) {
	for _, c := range []struct {
		shape, format string
		ok            bool
	}{
		{"", FormatText, true}, {ShapeRalph, FormatJSON, true}, {ShapeClaude, FormatStreamJSON, true},
		{ShapeClaude, FormatJSON, false}, {ShapeClaude, FormatText, false}, {"codex", FormatStreamJSON, false},
	} {
		err := ValidateShape(c.shape, c.format)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrBadFormat) {
			t.Errorf("%s with %s: %v", c.shape, c.format, err)
		}
	}
}

// TestClaudeSDKFlagsAreTakenOrRefused: the flags Claude Code's Agent SDK
// passes are ralph's where they mean something here (--max-thinking-tokens
// is --thinking-tokens), and every other one is refused in one sentence
// naming the SDK's option, not as an unknown flag.
func TestClaudeSDKFlagsAreTakenOrRefused(t *testing.T) {
	parse := func(args ...string) (*cli, error) {
		c := &cli{version: "test"}
		root := c.command()
		root.RunE = func(*cobra.Command, []string) error { return nil }
		root.PersistentPreRunE = nil
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		return c, root.Execute()
	}
	c, err := parse("--max-thinking-tokens", "2048", "--allow-dangerously-skip-permissions", "--input-format", "stream-json", "--stream-shape", "claude")
	if err != nil || c.f.thinkingTokens != 2048 || c.f.shape.inputFormat != InputStreamJSON || c.f.shape.streamShape != ShapeClaude {
		t.Fatalf("err %v, flags %+v", err, c.f.shape)
	}
	for name, r := range sdkOnlyFlags {
		_, err := parse("--"+name+"=x", "hi")
		var ue usageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--"+name+" is Claude Code's (the Agent SDK's "+r[0]+" option)") {
			t.Errorf("--%s: %v", name, err)
		}
	}
}
