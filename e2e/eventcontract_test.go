package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// contractSchema is docs/events.md's JSON Schema, made strict for the
// test: a consumer must ignore fields and kinds it does not know, but
// ralph must print none the page does not document, so every object
// here forbids other members and the type must be a documented kind.
func contractSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("## JSON Schema\n\n```json\n"))
	block, _, ok2 := bytes.Cut(rest, []byte("\n```"))
	if !ok || !ok2 {
		t.Fatal("docs/events.md has no JSON Schema block")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(block, &s); err != nil {
		t.Fatalf("docs/events.md's schema: %v", err)
	}
	for _, def := range s.Defs {
		if def.Properties != nil {
			def.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		}
	}
	var kinds []any
	for _, c := range s.AllOf {
		kinds = append(kinds, *c.If.Properties["type"].Const)
	}
	s.Properties["type"] = &jsonschema.Schema{Enum: kinds}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("docs/events.md's schema: %v", err)
	}
	return rs
}

// contractLines validates every stdout line of a face against the schema
// and returns the lines, decoded. A stream (stream is true) begins with
// its init line, which names the session.
func contractLines(t *testing.T, rs *jsonschema.Resolved, face, stdout string, stream bool) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: not a JSON line: %s", face, l)
		}
		if err := rs.Validate(m); err != nil {
			t.Fatalf("%s: a line breaks the contract in docs/events.md: %v\n%s", face, err, l)
		}
		lines = append(lines, m)
	}
	if stream && (lines[0]["type"] != "init" || lines[0]["session_id"] == "") {
		t.Fatalf("%s: the first line does not name the session: %v", face, lines[0])
	}
	return lines
}

// TestEveryJSONLineKeepsTheContract is the must-show: every JSON line of
// every face (stream-json and json of a one-shot, of a resumed one, of a
// script, of ralph run, plan and review, ralph watch --json of a run and
// of a one-shot, and ralph logs --json) validates against the schema docs/events.md publishes, with
// runs that make many kinds of line: tool calls and their errors, a child
// agent that fails, retries, task attempts, decisions, a slash command.
func TestEveryJSONLineKeepsTheContract(t *testing.T) {
	t.Parallel()
	rs := contractSchema(t)
	seen := map[string]bool{}
	note := func(lines []map[string]any) {
		for _, m := range lines {
			seen[m["type"].(string)] = true
		}
	}
	const refused = `{"status":400,"body":"{\"error\":{\"message\":\"the model refused this\"}}"}`
	one := gitProjectDir(t)
	srv := inlineServer(t, `{"name":"many","responses":[
	  {"status":429,"headers":{"Retry-After":"1"},"body":"{\"error\":{\"message\":\"Rate limit reached (fake)\"}}"},
	  {"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"hi\\n\"}"},{"name":"run_command","arguments":"{\"command\":\"cat a.txt\"}"},{"name":"read_file","arguments":"{\"path\":\"missing.txt\"}"}]},
	  {"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\":\"one\"}"}]},
	  `+refused+`,
	  {"text":"All done."}]}`)
	r := ralph(t, one, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--output-format", "stream-json", "do it")
	if r.code != 0 {
		t.Fatalf("the one-shot exited %d: %s", r.code, r.stderr)
	}
	lines := contractLines(t, rs, "a one-shot's stream-json", r.stdout, true)
	note(lines)
	id := lines[0]["session_id"].(string)

	// Resumed by id with JSON: the stream names the same session first.
	r = ralph(t, one, cleanEnv(t), nil, "--base-url", inlineServer(t, `{"name":"again","responses":[{"text":"Again."}]}`).URL,
		"--resume", id, "--output-format", "stream-json", "say it again")
	if r.code != 0 {
		t.Fatalf("the resumed one-shot exited %d: %s", r.code, r.stderr)
	}
	resumed := contractLines(t, rs, "a resumed one-shot's stream-json", r.stdout, true)
	if resumed[0]["session_id"] != id || resumed[len(resumed)-1]["session_id"] != id {
		t.Fatalf("ralph --resume %s streamed another session:\n%s", id, r.stdout)
	}
	r = ralph(t, one, cleanEnv(t), nil, "--base-url", inlineServer(t, `{"name":"json","responses":[`+refused+`]}`).URL,
		"--resume", id, "--output-format", "json", "once more")
	if r.code != 1 {
		t.Fatalf("a refused request exited %d, want 1: %s", r.code, r.stderr)
	}
	note(contractLines(t, rs, "a one-shot's json", r.stdout, false))
	r = ralph(t, one, cleanEnv(t), nil, "watch", "--json")
	watched := contractLines(t, rs, "ralph watch --json of a one-shot", r.stdout, true)
	if watched[0]["session_id"] != id {
		t.Fatalf("the watch's first line is not the session's: %v", watched[0])
	}
	r = ralph(t, one, cleanEnv(t), nil, "logs", "--json", id)
	if logged := contractLines(t, rs, "ralph logs --json", r.stdout, true); len(logged) != len(watched) || logged[0]["session_id"] != id {
		t.Fatalf("ralph logs --json printed %d lines, ralph watch --json %d:\n%s", len(logged), len(watched), r.stdout)
	}

	r = ralph(t, scriptProject(t), cleanEnv(t), nil, "script", "--keep-going", "--output-format", "stream-json",
		testdata("chat", "script.txt"), "--base-url", scenarioServer(t, "chat_script").URL)
	note(contractLines(t, rs, "a script's stream-json", r.stdout, true))

	// The task loop: the first request is rate limited, and one of the
	// first task's is refused, so its attempt fails and is tried again.
	var n atomic.Int32
	child := taskChildModel()
	loopSrv := llmtest.NewServerFunc(func(req llmtest.RecordedRequest) llmtest.Response {
		switch n.Add(1) {
		case 1:
			return llmtest.Response{Status: 429, Headers: map[string]string{"Retry-After": "1"}}
		case 3:
			return llmtest.Response{Status: 400}
		}
		return child(req)
	})
	t.Cleanup(loopSrv.Close)
	run := gitProjectDir(t)
	writeTasks(t, run, "one", "two")
	shIn(t, run, "git add RALPH_TASKS.md && git commit -qm tasks")
	r = ralph(t, run, cleanEnv(t), nil, "--base-url", loopSrv.URL, "-y", "--output-format", "stream-json", "run", "--verify", "true")
	if r.code != 0 {
		t.Fatalf("the run exited %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	lines = contractLines(t, rs, "ralph run's stream-json", r.stdout, true)
	note(lines)
	runID := lines[len(lines)-1]["session_id"]
	if lines[0]["session_id"] != runID {
		t.Fatalf("ralph run's init names %v, its result %v", lines[0]["session_id"], runID)
	}
	r = ralph(t, run, cleanEnv(t), nil, "watch", "--json")
	if watched := contractLines(t, rs, "ralph watch --json of a run", r.stdout, true); watched[0]["session_id"] != runID || watched[0]["model"] != lines[0]["model"] {
		t.Fatalf("the watch's first line is not the run's %v: %v", lines[0], watched[0])
	}

	// ralph plan and ralph review stream their runs too, and end with
	// their own object in place of a result.
	planDir := t.TempDir()
	mustWrite(t, filepath.Join(planDir, "RALPH_TASKS.md"), personsTasks)
	planSrv := llmtest.NewServerFunc(plannerModel())
	t.Cleanup(planSrv.Close)
	r = ralph(t, planDir, cleanEnv(t), nil, "--base-url", planSrv.URL, "--output-format", "stream-json", "plan", "add a cache")
	if r.code != 0 {
		t.Fatalf("ralph plan exited %d: %s", r.code, r.stderr)
	}
	note(contractLines(t, rs, "ralph plan's stream-json", r.stdout, true))
	reviewSrv := llmtest.NewServerFunc(reviewModel())
	t.Cleanup(reviewSrv.Close)
	r = ralph(t, reviewProject(t), cleanEnv(t), nil, "--base-url", reviewSrv.URL, "-y", "--output-format", "stream-json", "review")
	if r.code != 0 {
		t.Fatalf("ralph review exited %d: %s", r.code, r.stderr)
	}
	note(contractLines(t, rs, "ralph review's stream-json", r.stdout, true))

	for _, kind := range []string{"init", "plan", "review", "turn_started", "retry", "tool_call", "tool_result", "text_delta", "assistant", "agent_spawned",
		"agent_finished", "error", "files_changed", "task_changed", "verified", "decision", "command", "result"} {
		if !seen[kind] {
			kinds := make([]string, 0, len(seen))
			for k := range seen {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			t.Fatalf("no %s line was checked; the runs printed %v", kind, kinds)
		}
	}
}
