package llmtest

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// responsesRecordings is testdata/openai-responses at the module's root.
var responsesRecordings = filepath.Join("..", "..", "..", "testdata", "openai-responses")

// Every recording in testdata/openai-responses replays byte for byte; a
// stream parses as the real API's does: every event named by its data's
// type, each with a sequence_number, increasing from 0, and ending with a
// terminal event (response.completed, or response.failed after error).
func TestResponsesReplayRecordings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(responsesRecordings, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var streams, bodies []string
	for _, f := range files {
		switch filepath.Ext(f) {
		case ".sse":
			streams = append(streams, f)
		case ".json":
			bodies = append(bodies, f)
		}
	}
	if len(streams) < 6 || len(bodies) < 1 {
		t.Fatalf("%d streams and %d bodies in %s", len(streams), len(bodies), responsesRecordings)
	}
	kinds := map[string]string{}
	for _, f := range streams {
		t.Run(filepath.Base(f), func(t *testing.T) {
			srv := NewServer(&Scenario{Responses: []Response{{Replay: f, ChunkDelayMS: 1}, {Replay: f}}})
			defer srv.Close()
			events := readSSE(t, postAPI(t, srv, "/v1/responses", `{"model":"gpt-5-codex","stream":true,"input":"hi"}`))
			last := -1.0
			for i, e := range events {
				seq, ok := e.data["sequence_number"].(float64)
				if !ok || seq <= last {
					t.Errorf("event %d (%s): sequence_number %v after %v", i, e.name, e.data["sequence_number"], last)
				}
				last = seq
				if e.name == "response.output_item.done" {
					kinds[filepath.Base(f)] += e.data["item"].(map[string]any)["type"].(string) + " "
				}
			}
			if events[0].name != "response.created" || events[0].data["sequence_number"] != 0.0 {
				t.Errorf("first event %v", events[0])
			}
			if end := events[len(events)-1].name; end != "response.completed" && end != "response.failed" {
				t.Errorf("ends with %s", end)
			}
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(postAPI(t, srv, "/v1/responses", `{"model":"gpt-5-codex","stream":true,"input":"hi"}`).Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("replayed %d bytes, recorded %d", len(got), len(want))
			}
		})
	}
	// What each recording shows, as its README says.
	for file, want := range map[string]string{
		"text.sse":                    "reasoning message ",
		"function_call.sse":           "reasoning function_call ",
		"reasoning_function_call.sse": "reasoning function_call ",
		"custom_tool_call.sse":        "reasoning custom_tool_call ",
		"local_shell_call.sse":        "reasoning local_shell_call ",
		"error_failed.sse":            "",
	} {
		if kinds[file] != want {
			t.Errorf("%s: items %q, want %q", file, kinds[file], want)
		}
	}
	for _, f := range bodies {
		srv := NewServer(&Scenario{Responses: []Response{{Replay: f, Status: http.StatusBadRequest}}})
		resp := postAPI(t, srv, "/v1/responses", `{"model":"gpt-4o","input":"hi"}`)
		got, _ := io.ReadAll(resp.Body)
		want, _ := os.ReadFile(f)
		if resp.StatusCode != http.StatusBadRequest || string(got) != string(want) || resp.Header.Get("Openai-Version") != "2020-10-01" {
			t.Errorf("%s: %d %v %s", filepath.Base(f), resp.StatusCode, resp.Header, got)
		}
		srv.Close()
	}
}

// The real API's reasoning, replayed, goes back to the stand-in with its
// id and encrypted_content and is accepted as given; a changed one is
// not.
func TestResponsesReplayedReasoningAccepted(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Replay: filepath.Join(responsesRecordings, "reasoning_function_call.sse")}, {Text: "next"}}})
	defer srv.Close()
	_, items := streamResponses(t, srv, `{"model":"gpt-5.1-codex-max","stream":true,"store":false,"include":["reasoning.encrypted_content"],"input":"hi"}`)
	if len(items) != 2 || items[0]["type"] != "reasoning" {
		t.Fatalf("items %v", items)
	}
	output := `{"type":"function_call_output","call_id":"` + items[1]["call_id"].(string) + `","output":"19"}`
	back := rsBody(`[` + userItem + `,` + rawItems(items) + `,` + output + `]`)
	forged := strings.Replace(back, `"encrypted_content":"gAAAAABp`, `"encrypted_content":"gAAAAABq`, 1)
	if status, m := postResponses(t, srv, forged); status != http.StatusBadRequest || errorOf(m)["code"] != "invalid_encrypted_content" {
		t.Errorf("a changed encrypted_content: %d %v", status, m)
	}
	if status, m := postResponses(t, srv, back); status != http.StatusOK {
		t.Errorf("the recorded reasoning given back: %d %v", status, m)
	}
}
