package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestToolsAreSentAsGoOpenAIWouldSendThem: the tools ralph encodes once and
// adds to the body arrive as go-openai's own encoding of them would, with
// the rest of the request untouched.
func TestToolsAreSentAsGoOpenAIWouldSendThem(t *testing.T) {
	defs := []conversation.ToolDef{
		{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type": "object",
			"properties": {"path": {"type": "string", "description": "a \"quoted\" path \u00e9"}}, "required": ["path"]}`)},
		{Name: "list_files"},
	}
	srv := serveResponses(t, llmtest.Response{Text: "one"}, llmtest.Response{Text: "two"})
	c := clientFor(srv, fastConfig())
	req := userRequest("hi")
	req.Tools = defs
	for range 2 { // the second from the cache
		if _, err := c.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	var want []openai.Tool
	for _, d := range defs {
		params := d.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		want = append(want, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: d.Name, Description: d.Description, Parameters: params}})
	}
	wantJSON, err := json.Marshal(openai.ChatCompletionRequest{Model: testModel, Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}, Tools: want})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range srv.Requests() {
		if !jsonEqual(t, r.Body, wantJSON) {
			t.Errorf("request %d:\n got %s\nwant %s", i, r.Body, wantJSON)
		}
	}
}

// TestChangedToolsAreEncodedAgain: the cache never sends definitions that
// changed since they were encoded, even under the same names.
func TestChangedToolsAreEncodedAgain(t *testing.T) {
	var tc toolCache
	a := []conversation.ToolDef{{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}
	b := []conversation.ToolDef{{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"y":{"type":"string"}}}`)}}
	for _, defs := range [][]conversation.ToolDef{a, b, a, b[:0]} {
		got, err := tc.encoded(defs)
		if err != nil {
			t.Fatal(err)
		}
		var decoded []wireTool
		if err := json.Unmarshal(got, &decoded); err != nil || len(decoded) != len(defs) {
			t.Fatalf("%s: %v", got, err)
		}
		for i := range defs {
			var x, y any
			_ = json.Unmarshal(decoded[i].Function.Parameters, &x)
			_ = json.Unmarshal(defs[i].Parameters, &y)
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("sent %s for %s", decoded[i].Function.Parameters, defs[i].Parameters)
			}
		}
	}
	if _, err := tc.encoded([]conversation.ToolDef{{Name: "bad", Parameters: json.RawMessage(`{"type":`)}}); err == nil {
		t.Fatal("broken parameters were encoded")
	}
}

// TestReasoningModelRefusesToolsBeforeSending: go-openai's own check of a
// request with tools still runs, though go-openai no longer sees them.
func TestReasoningModelRefusesToolsBeforeSending(t *testing.T) {
	srv := serveResponses(t, llmtest.Response{Text: "never"})
	c := clientFor(srv, fastConfig())
	req := Request{Model: openai.GPT6Sol, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}},
		Tools: []conversation.ToolDef{{Name: "x"}}}
	_, err := c.Stream(context.Background(), req, nil)
	if !errors.Is(err, openai.ErrReasoningToolsRequireResponses) {
		t.Fatalf("err = %v, want go-openai's refusal", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
}
