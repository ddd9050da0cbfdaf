package llmtest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A streamed Responses answer follows OpenAI's event sequence with
// increasing sequence numbers; the deltas join up to the items that
// output_item.done and response.completed carry.
func TestResponsesStream(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{
		Text: "Running it.", ChunkSize: 6,
		ToolCalls: []ToolCall{{ID: "call_9", Name: "exec_command", Arguments: `{"cmd":"printf hi > a.txt"}`}},
		Usage:     &Usage{PromptTokens: 30, CompletionTokens: 5},
	}}})
	defer srv.Close()
	events := readSSE(t, postAPI(t, srv, "/v1/responses", `{"model":"gpt-x","stream":true,"input":"hi"}`, "Authorization", "Bearer any"))
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	text, args := "", ""
	for i, e := range events {
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		}
	}
	if text != "Running it." || args != `{"cmd":"printf hi > a.txt"}` {
		t.Errorf("text %q, arguments %q", text, args)
	}
	// A message item is added with its (empty) content: codex finds no
	// item for the text deltas otherwise.
	if added := events[2].data["item"].(map[string]any); added["type"] != "message" || added["content"] == nil {
		t.Errorf("message item added: %v", added)
	}
	call := events[14].data["item"].(map[string]any)
	if call["type"] != "function_call" || call["call_id"] != "call_9" || call["name"] != "exec_command" || call["arguments"] != args || call["status"] != "completed" {
		t.Errorf("function_call item done: %v", call)
	}
	final := events[len(events)-1].data["response"].(map[string]any)
	usage := final["usage"].(map[string]any)
	if final["status"] != "completed" || len(final["output"].([]any)) != 2 || usage["input_tokens"] != 30.0 || usage["output_tokens"] != 5.0 || usage["total_tokens"] != 35.0 {
		t.Errorf("response.completed %v", final)
	}
}

// A plain request gets the response object; a finish reason of "length"
// makes it incomplete, in a stream too.
func TestResponsesNonStreamingAndIncomplete(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "done"}, {Text: "cut", FinishReason: "length"}, {Text: "cut", FinishReason: "length"}}})
	defer srv.Close()
	var r struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		IncompleteDetails map[string]string `json:"incomplete_details"`
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/responses", `{"model":"m","input":"hi"}`).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Object != "response" || r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Role != "assistant" ||
		r.Output[0].Content[0].Type != "output_text" || r.Output[0].Content[0].Text != "done" {
		t.Errorf("response %+v", r)
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/responses", `{"model":"m","input":"hi"}`).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "incomplete" || r.IncompleteDetails["reason"] != "max_output_tokens" {
		t.Errorf("response %+v", r)
	}
	events := readSSE(t, postAPI(t, srv, "/v1/responses", `{"model":"m","stream":true,"input":"hi"}`))
	if last := events[len(events)-1]; last.name != "response.incomplete" {
		t.Errorf("stream ends with %q", last.name)
	}
}

// A custom tool call streams its raw input as
// response.custom_tool_call_input.delta and .done; a local shell call
// comes whole in output_item.done, its action empty when added. The other
// APIs get them as function calls.
func TestResponsesCustomAndLocalShellCalls(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"
	action := `{"type":"exec","command":["ls","-a"],"timeout_ms":1000,"working_directory":"/w","env":{},"user":null}`
	resp := Response{ToolCalls: []ToolCall{
		{ID: "call_p", Type: "custom", Name: "apply_patch", Arguments: patch},
		{ID: "call_s", Type: "local_shell", Arguments: action},
	}}
	srv := NewServer(&Scenario{Responses: []Response{resp, resp}})
	defer srv.Close()
	events, items := streamResponses(t, srv, `{"model":"gpt-5-codex","stream":true,"input":"hi"}`)
	var names []string
	input := ""
	for _, e := range events {
		names = append(names, e.name)
		switch e.name {
		case "response.custom_tool_call_input.delta":
			input += e.data["delta"].(string)
			if e.data["item_id"] != "ctc_call_p" || e.data["output_index"] != 0.0 {
				t.Errorf("delta %v", e.data)
			}
		case "response.custom_tool_call_input.done":
			if e.data["input"] != patch {
				t.Errorf("input.done %v", e.data)
			}
		case "response.output_item.added":
			if it := e.data["item"].(map[string]any); it["type"] == "local_shell_call" && len(it["action"].(map[string]any)["command"].([]any)) != 0 {
				t.Errorf("local shell call added with its command: %v", it)
			}
		}
	}
	if input != patch {
		t.Errorf("custom input %q", input)
	}
	want := "response.created response.in_progress response.output_item.added response.custom_tool_call_input.delta " +
		"response.custom_tool_call_input.delta response.custom_tool_call_input.delta response.custom_tool_call_input.done " +
		"response.output_item.done response.output_item.added response.output_item.done response.completed"
	if strings.Join(names, " ") != want {
		t.Errorf("events %q", names)
	}
	if len(items) != 2 || items[0]["type"] != "custom_tool_call" || items[0]["input"] != patch || items[0]["call_id"] != "call_p" ||
		items[1]["type"] != "local_shell_call" || items[1]["call_id"] != "call_s" || items[1]["status"] != "completed" {
		t.Fatalf("items %v", items)
	}
	if a, _ := json.Marshal(items[1]["action"]); string(a) != `{"command":["ls","-a"],"env":{},"timeout_ms":1000,"type":"exec","user":null,"working_directory":"/w"}` {
		t.Errorf("action %s", a)
	}
	m := decode(t, postAPI(t, srv, "/v1/chat/completions", `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`).Body)
	calls := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["tool_calls"].([]any)
	f0 := calls[0].(map[string]any)["function"].(map[string]any)
	f1 := calls[1].(map[string]any)["function"].(map[string]any)
	if f0["name"] != "apply_patch" || f0["arguments"] != `{"input":"*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"}` ||
		f1["name"] != "local_shell" || f1["arguments"] != action {
		t.Errorf("as function calls: %v", calls)
	}
	if _, err := ParseScenario([]byte(`{"responses":[{"tool_calls":[{"type":"local_shell","arguments":"ls"}]}]}`)); err == nil {
		t.Error("a local shell call whose action is no object accepted")
	}
	if _, err := ParseScenario([]byte(`{"responses":[{"tool_calls":[{"type":"shell","name":"x","arguments":"{}"}]}]}`)); err == nil {
		t.Error("an unknown call type accepted")
	}
}

// A finish reason of "content_filter" ends the stream with
// response.incomplete; a Failure with the error event and
// response.failed as the real stream does, or only one of them; chat
// completions and the Messages API end theirs with their own error.
func TestResponsesIncompleteAndFailed(t *testing.T) {
	failure := &Failure{Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-5-codex"}
	srv := NewServer(&Scenario{Responses: []Response{
		{Text: "cut", FinishReason: "content_filter"},
		{Text: "partial", Failure: failure},
		{Text: "partial", Failure: &Failure{Code: "server_error", Message: "boom", Only: "failed"}},
		{Text: "partial", Failure: &Failure{Code: "server_error", Message: "boom", Only: "error"}},
		{Text: "partial", Failure: failure},
		{Text: "partial", Failure: failure},
	}})
	defer srv.Close()
	ask := `{"model":"gpt-5-codex","stream":true,"input":"hi"}`
	events, _ := streamResponses(t, srv, ask)
	last := events[len(events)-1]
	if r := last.data["response"].(map[string]any); last.name != "response.incomplete" || r["status"] != "incomplete" ||
		r["incomplete_details"].(map[string]any)["reason"] != "content_filter" {
		t.Errorf("content filter: %s %v", last.name, last.data)
	}
	events, _ = streamResponses(t, srv, ask)
	n := len(events)
	errEv, failed := events[n-2], events[n-1]
	if errEv.name != "error" || failed.name != "response.failed" {
		t.Fatalf("ends with %q", names(events)[n-2:])
	}
	if e := errEv.data["error"].(map[string]any); e["code"] != "rate_limit_exceeded" || e["type"] != "rate_limit_exceeded" || e["message"] != failure.Message {
		t.Errorf("error event %v", errEv.data)
	}
	if r := failed.data["response"].(map[string]any); r["status"] != "failed" || r["error"].(map[string]any)["code"] != "rate_limit_exceeded" || r["usage"] != nil {
		t.Errorf("response.failed %v", failed.data)
	}
	for _, only := range []string{"response.failed", "error"} {
		events, _ = streamResponses(t, srv, ask)
		if last := events[len(events)-1].name; last != only || events[len(events)-2].name != "response.output_item.done" {
			t.Errorf("only %s: %q", only, names(events))
		}
	}
	chat := newClient(srv, "k")
	got := streamOnce(t, chat, userRequest("gpt-4.1", "hi"))
	if got.recvError == nil || !strings.Contains(got.recvError.Error(), "Rate limit reached") {
		t.Errorf("chat completions: %+v", got)
	}
	events = readSSE(t, postAPI(t, srv, "/v1/messages", `{"model":"c","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	if e := events[len(events)-1]; e.name != "error" || e.data["error"].(map[string]any)["type"] != "rate_limit_error" {
		t.Errorf("messages: %v", e)
	}
	if _, err := ParseScenario([]byte(`{"responses":[{"failure":{"code":"x","message":"y","only":"both"}}]}`)); err == nil {
		t.Error("an unknown failure.only accepted")
	}
}

// With the prompt cache on, a request that repeats an earlier one's
// prefix under the same prompt_cache_key reads it from the cache; another
// key reads nothing.
func TestResponsesPromptCache(t *testing.T) {
	srv := NewServer(&Scenario{PromptCache: true, Responses: []Response{{Text: "a"}, {Text: "b"}, {Text: "c"}}})
	defer srv.Close()
	first := `{"type":"message","role":"user","content":"` + strings.Repeat("context ", 200) + `"}`
	cached := func(key, input string) float64 {
		_, m := postResponses(t, srv, `{"model":"gpt-5-codex","prompt_cache_key":"`+key+`","instructions":"be brief","input":[`+input+`]}`)
		return m["usage"].(map[string]any)["input_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	}
	if n := cached("s1", first); n != 0 {
		t.Errorf("the first request read %v tokens", n)
	}
	if n := cached("s1", first+`,{"role":"user","content":"more"}`); n < 400 {
		t.Errorf("the second request read %v tokens", n)
	}
	if n := cached("s2", first); n != 0 {
		t.Errorf("another key read %v tokens", n)
	}
	if r := srv.Requests()[1]; r.CacheRead == 0 {
		t.Errorf("CacheRead not recorded: %+v", r.CacheRead)
	}
	off := NewServer(&Scenario{Responses: []Response{{Text: "a"}, {Text: "b"}}})
	defer off.Close()
	for range 2 {
		_, m := postResponses(t, off, `{"model":"m","prompt_cache_key":"s","input":[`+first+`]}`)
		if n := m["usage"].(map[string]any)["input_tokens_details"].(map[string]any)["cached_tokens"]; n != 0.0 {
			t.Errorf("without the cache: %v", n)
		}
	}
}
