package llmtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const scenarioDir = "../../../testdata/scenarios"

func TestParseScenarioErrors(t *testing.T) {
	cases := map[string]string{
		"bad JSON":       `{"name": "x", "responses": [`,
		"no responses":   `{"name": "x", "responses": []}`,
		"unknown field":  `{"name": "x", "responses": [{"text": "a", "chunk_delay": 5}]}`,
		"bad status":     `{"name": "x", "responses": [{"status": 42}]}`,
		"negative delay": `{"name": "x", "responses": [{"delay_ms": -1}]}`,
		"chunks differ":  `{"name": "x", "responses": [{"tool_calls": [{"name": "f", "arguments": "{}", "arg_chunks": ["{"]}]}]}`,
		"trailing data":  `{"name": "x", "responses": [{"text": "a"}]} {}`,
	}
	for name, data := range cases {
		if _, err := ParseScenario([]byte(data)); err == nil {
			t.Errorf("%s: ParseScenario accepted %s", name, data)
		}
	}
}

func TestLoadScenarioNamesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(bad, []byte(`{"responses": [}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadScenario(bad)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v does not name %s", err, bad)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"name": "e", "responses": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadScenario(empty)
	if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "no responses") {
		t.Errorf("error %v does not explain the empty scenario", err)
	}

	unnamed := filepath.Join(dir, "unnamed.json")
	if err := os.WriteFile(unnamed, []byte(`{"responses": [{"text": "a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadScenario(unnamed)
	if err != nil || sc.Name != "unnamed" {
		t.Errorf("unnamed scenario = %+v, %v; want the file name as its name", sc, err)
	}
}

// TestTestdataScenarios loads every scenario file and plays it through the
// real client, so a broken fixture fails here rather than in a distant test.
func TestTestdataScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"demo", "write_hello", "run_command", "retry_429", "truncated", "invalid_tool_json",
		"three_turns", "slow_stream", "sleep_command", "parallel_tools"}
	found := map[string]bool{}
	for _, f := range files {
		found[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, name := range want {
		if !found[name] {
			t.Errorf("missing scenario %s.json", name)
		}
	}

	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := LoadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sc.Responses {
				sc.Responses[i].DelayMS, sc.Responses[i].ChunkDelayMS = 0, 0 // replay fast
			}
			srv := NewServer(sc)
			defer srv.Close()
			client := newClient(srv, sc.APIKey)
			model := sc.Model
			if model == "" {
				model = "fake-model"
			}
			for i, r := range sc.Responses {
				stream, err := client.CreateChatCompletionStream(context.Background(), userRequest(model, "go"))
				if r.Status != 0 && r.Status != 200 {
					if apiErr := apiError(t, err); apiErr.HTTPStatusCode != r.Status {
						t.Errorf("response %d: status %d, want %d", i+1, apiErr.HTTPStatusCode, r.Status)
					}
					continue
				}
				if err != nil {
					t.Fatalf("response %d: %v", i+1, err)
				}
				got := collect(t, stream)
				if got.recvError != nil || got.content != joinedText(r) || len(got.calls) != len(r.ToolCalls) {
					t.Errorf("response %d: got %+v", i+1, got)
				}
				if r.Truncate != (got.finish == "") {
					t.Errorf("response %d: finish %q with truncate=%v", i+1, got.finish, r.Truncate)
				}
				for j, c := range got.calls {
					if want := r.ToolCalls[j].asFunction(); c.Function.Name != want.Name || c.Function.Arguments != want.fullArguments() {
						t.Errorf("response %d call %d = %+v", i+1, j+1, c)
					}
				}
			}
		})
	}
}

// TestScenarioFixtureArguments pins the tool arguments other packages'
// tests rely on, including the deliberately broken one.
func TestScenarioFixtureArguments(t *testing.T) {
	args := func(file string, resp, call int) string {
		sc, err := LoadScenario(filepath.Join(scenarioDir, file))
		if err != nil {
			t.Fatal(err)
		}
		return sc.Responses[resp].ToolCalls[call].fullArguments()
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(args("demo.json", 0, 0)), &v); err != nil || v["path"] != "hello.txt" || v["content"] != "hi\n" {
		t.Errorf("demo write_file args = %v, %v", v, err)
	}
	if json.Valid([]byte(args("invalid_tool_json.json", 0, 0))) {
		t.Error("invalid_tool_json.json response 1 has valid JSON arguments")
	}
	if got := args("sleep_command.json", 0, 0); got != `{"command":"cut -d' ' -f5 /proc/self/stat > cmd.pid; sleep 60"}` {
		t.Errorf("sleep_command args = %s", got)
	}
	sc, err := LoadScenario(filepath.Join(scenarioDir, "slow_stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(textChunks(sc.Responses[0])); n < 190 || n > 220 || sc.Responses[0].ChunkDelayMS != 50 {
		t.Errorf("slow_stream has %d chunks at %dms", n, sc.Responses[0].ChunkDelayMS)
	}
}
