package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// postResponses sends a Responses request and returns the status and the
// decoded body.
func postResponses(t *testing.T, srv *Server, body string) (int, map[string]any) {
	t.Helper()
	resp := postAPI(t, srv, "/v1/responses", body, "Authorization", "Bearer k")
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, m
}

// errorOf is the error object of a refusal.
func errorOf(m map[string]any) map[string]any {
	e, _ := m["error"].(map[string]any)
	return e
}

// paramPattern and memberPattern make a param the table's pattern.
var (
	paramPattern  = regexp.MustCompile(`\[\d+\]`)
	memberPattern = regexp.MustCompile(`\]\.\w+$`)
)

func rsBody(input string, extra ...string) string {
	return `{"model":"gpt-5-codex","store":false,"include":["reasoning.encrypted_content"],` + strings.Join(append(extra, ""), ",") + `"input":` + input + `}`
}

const (
	userItem = `{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}`
	fcItem   = `{"type":"function_call","call_id":"call_a","name":"shell","arguments":"{}"}`
	fcoItem  = `{"type":"function_call_output","call_id":"call_a","output":"ok"}`
)

// The stand-in refuses what the real Responses API refuses, with its
// status, param, code and words, and consumes no scripted response for
// it; every row of responsesRules is met.
func TestResponsesChecks(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "served"}}})
	defer srv.Close()
	list := quoteList(responsesItemTypes)
	cases := []struct {
		rule, body, param, want string
	}{
		{rsInputMissing, `{"model":"m"}`, "input", "Missing required parameter: 'input'."},
		{rsInputEmpty, rsBody(`[]`), "", `One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`},
		{rsInputType, rsBody(`{"role":"user","content":"hi"}`), "input",
			"Invalid type for 'input': expected one of a string or array of input items, but got an object instead."},
		{rsInputType, rsBody(`null`), "input", "Invalid type for 'input': expected a string, but got an object instead."},
		{rsItemNotObject, rsBody(`[7]`), "input[0]", "Invalid type for 'input[0]': expected an input item, but got an integer instead."},
		{rsItemType, rsBody(`[` + userItem + `,{"type":"tool","content":"x"}]`), "input[1]", "Invalid value: 'tool'. Supported values are: " + list + "."},
		{rsItemRole, rsBody(`[{"role":"tool","content":"x"}]`), "input[0]",
			"Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'."},
		{rsItemMissing, rsBody(`[` + userItem + `,` + fcItem + `,{"type":"function_call_output","output":"ok"}]`), "input[2].call_id",
			"Missing required parameter: 'input[2].call_id'."},
		{rsItemMissing, rsBody(`[` + userItem + `,{"type":"reasoning","encrypted_content":"x"}]`), "input[1].summary",
			"Missing required parameter: 'input[1].summary'."},
		{rsItemMemberType, rsBody(`[` + userItem + `,{"type":"function_call","call_id":"call_a","name":"shell","arguments":{"cmd":"ls"}},` + fcoItem + `]`),
			"input[1].arguments", "Invalid type for 'input[1].arguments': expected a string, but got an object instead."},
		{rsReasoningContent, rsBody(`[` + userItem + `,{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"I think"}],"encrypted_content":"x"}]`),
			"input[1].content", "Invalid 'input[1].content': array too long. Expected an array with maximum length 0, but got an array with length 1 instead."},
		{rsPreviousNotFound, rsBody(`[`+fcoItem+`]`, `"previous_response_id":"resp_gone"`), "previous_response_id", "Previous response with id 'resp_gone' not found."},
		{rsItemNotFound, rsBody(`[` + userItem + `,{"type":"reasoning","id":"rs_123","summary":[]},` + fcItem + `,` + fcoItem + `]`), "input",
			"Item with id 'rs_123' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."},
		{rsItemNotFound, `{"model":"m","input":[{"type":"item_reference","id":"msg_9"}]}`, "input", "Item with id 'msg_9' not found."},
		{rsReasoningNoState, rsBody(`[` + userItem + `,{"type":"reasoning","summary":[],"content":null},` + fcItem + `,` + fcoItem + `]`), "input",
			"Reasoning input items must have `encrypted_content` when `store` is false"},
		{rsEncryptedContent, rsBody(`[` + userItem + `,{"type":"reasoning","summary":[],"encrypted_content":"gAAAAforgedDQ=="},` + fcItem + `,` + fcoItem + `]`), "",
			"The encrypted content gAAA...DQ== could not be verified."},
		{rsNoCall, rsBody(`[` + userItem + `,` + fcoItem + `]`), "input", "No tool call found for function call output with call_id call_a."},
		{rsNoCall, rsBody(`[` + userItem + `,{"type":"custom_tool_call","call_id":"call_a","name":"apply_patch","input":"x"},` + fcoItem + `]`), "input",
			"No tool call found for function call output with call_id call_a."},
		{rsNoCustomCall, rsBody(`[` + userItem + `,` + fcItem + `,{"type":"custom_tool_call_output","call_id":"call_a","output":"ok"}]`), "input",
			"No tool call found for custom tool call output with call_id call_a."},
		{rsNoOutput, rsBody(`[` + userItem + `,` + fcItem + `]`), "input", "No tool output found for function call call_a."},
		{rsNoCustomOutput, rsBody(`[` + userItem + `,{"type":"custom_tool_call","call_id":"call_c","name":"apply_patch","input":"x"}]`), "input",
			"No tool output found for custom tool call call_c."},
		{rsNoShellOutput, rsBody(`[` + userItem + `,{"type":"local_shell_call","call_id":"call_l","status":"completed","action":{"type":"exec","command":["ls"]}}]`), "input",
			"No tool output found for local shell call call_l."},
		{rsEncryptedContent, rsBody(`[` + userItem + `,{"type":"reasoning","summary":[],"encrypted_content":"` + EncryptedContent("", 99) + `"},` + fcItem + `,` + fcoItem + `]`), "",
			"The encrypted content " + abbreviated(EncryptedContent("", 99)) + " could not be verified."}, // another server's
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.rule] = true
		rule := responsesRules[c.rule]
		status, m := postResponses(t, srv, c.body)
		e := errorOf(m)
		code, _ := e["code"].(string)
		param, _ := e["param"].(string)
		if status != rule.status || e["type"] != "invalid_request_error" || e["message"] != c.want || param != c.param || code != rule.code {
			t.Errorf("%s: %d %v\nwant %d param %q code %q %q", c.rule, status, m, rule.status, c.param, rule.code, c.want)
		}
		if p := paramPattern.ReplaceAllString(c.param, "[N]"); p != rule.param && memberPattern.ReplaceAllString(p, "].F") != rule.param {
			t.Errorf("%s: param %q is not the table's %q", c.rule, c.param, rule.param)
		}
		for _, k := range []string{"param", "code"} {
			if _, ok := e[k]; !ok {
				t.Errorf("%s: no %s (null) in %v", c.rule, k, e)
			}
		}
	}
	// The refusals that need the stand-in's own items are met in
	// TestResponsesRoundTrip.
	seen[rsWithoutReasoning], seen[rsReasoningFollowed] = true, true
	for rule := range responsesRules {
		if !seen[rule] {
			t.Errorf("no case meets %q", rule)
		}
	}
	// None of them consumed the response.
	if status, m := postResponses(t, srv, rsBody(`[`+userItem+`,`+fcItem+`,`+fcoItem+`]`)); status != http.StatusOK || !strings.Contains(fmt.Sprint(m["output"]), "served") {
		t.Errorf("a well-formed request: %d %v", status, m)
	}
}

// streamed is a Responses stream read back: its events and the items of
// output_item.done.
func streamResponses(t *testing.T, srv *Server, body string) ([]sse, []map[string]any) {
	t.Helper()
	resp := postAPI(t, srv, "/v1/responses", body, "Authorization", "Bearer k")
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	events := readSSE(t, resp)
	var items []map[string]any
	for i, e := range events {
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d (%s) has sequence_number %v", i, e.name, e.data["sequence_number"])
		}
		if e.name == "response.output_item.done" {
			items = append(items, e.data["item"].(map[string]any))
		}
	}
	return events, items
}

// rawItems is the items as JSON, to give back.
func rawItems(items []map[string]any) string {
	var parts []string
	for _, it := range items {
		b, _ := json.Marshal(it)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ",")
}

// A reasoning item streams its summary and carries its encrypted_content
// in output_item.done only; given back as codex 0.169 gives it (with the
// ids, store false) with the call's output, it is served, and the
// recorded request holds it byte for byte. Dropped or cut from the item
// after it, or sent by id alone, it is refused as the real API refuses
// it.
func TestResponsesRoundTrip(t *testing.T) {
	reasoning := "**Planning** I list the files first."
	srv := NewServer(&Scenario{Responses: []Response{
		{Reasoning: reasoning, ToolCalls: []ToolCall{{ID: "call_1", Name: "shell", Arguments: `{"command":["ls"]}`}}},
		{Text: "done"}, {Text: "done"},
	}})
	defer srv.Close()
	ask := rsBody(`[`+userItem+`]`, `"stream":true`, `"reasoning":{"effort":"medium","summary":"auto"}`)
	events, items := streamResponses(t, srv, ask)
	var want []string
	summary := ""
	for _, e := range events {
		if strings.HasPrefix(e.name, "response.reasoning_summary") {
			want = append(want, e.name)
		}
		if e.name == "response.reasoning_summary_text.delta" {
			summary += e.data["delta"].(string)
		}
		if e.name == "response.output_item.added" {
			if it := e.data["item"].(map[string]any); it["type"] == "reasoning" && it["encrypted_content"] != nil {
				t.Errorf("encrypted_content in output_item.added: %v", it)
			}
		}
	}
	if strings.Join(want, " ") != "response.reasoning_summary_part.added response.reasoning_summary_text.delta response.reasoning_summary_text.delta "+
		"response.reasoning_summary_text.delta response.reasoning_summary_text.delta response.reasoning_summary_text.delta "+
		"response.reasoning_summary_text.done response.reasoning_summary_part.done" || summary != reasoning {
		t.Errorf("summary events %q, text %q", want, summary)
	}
	if len(items) != 2 || items[0]["type"] != "reasoning" || items[0]["encrypted_content"] != EncryptedContent(reasoning, 0) ||
		items[1]["type"] != "function_call" || items[1]["id"] != "fc_call_1" {
		t.Fatalf("items %v", items)
	}
	final := events[len(events)-1].data["response"].(map[string]any)
	if u := final["usage"].(map[string]any); u["output_tokens_details"].(map[string]any)["reasoning_tokens"] == 0.0 {
		t.Errorf("no reasoning tokens in %v", u)
	}

	back := func(input string) (int, map[string]any) {
		return postResponses(t, srv, rsBody(`[`+userItem+`,`+input+`]`, `"reasoning":{"effort":"medium","summary":"auto"}`))
	}
	output := `{"type":"function_call_output","call_id":"call_1","output":"a.txt"}`
	refusals := []struct{ name, input, want string }{
		{"the call by id without its reasoning", rawItems(items[1:]) + `,` + output,
			"Item 'fc_call_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_fake_1'."},
		{"the reasoning by id without the call", rawItems(items[:1]), "Item 'rs_fake_1' of type 'reasoning' was provided without its required following item."},
		{"the reasoning by id without encrypted_content", `{"type":"reasoning","id":"rs_fake_1","summary":[]},` + rawItems(items[1:]) + `,` + output,
			"Item with id 'rs_fake_1' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."},
		{"the call without its output", rawItems(items), "No tool output found for function call call_1."},
	}
	for _, c := range refusals {
		if status, m := back(c.input); errorOf(m)["message"] != c.want {
			t.Errorf("%s: %d %v\nwant %q", c.name, status, m, c.want)
		}
	}
	// Given back whole, ids and all, as codex 0.169 does; then without the
	// ids, as codex 0.77 does.
	if status, m := back(rawItems(items) + `,` + output); status != http.StatusOK {
		t.Fatalf("given back whole: %d %v", status, m)
	}
	noIDs := strings.NewReplacer(`"id":"rs_fake_1",`, "", `"id":"fc_call_1",`, "").Replace(rawItems(items))
	if status, m := back(noIDs + `,` + output); status != http.StatusOK {
		t.Fatalf("given back without ids: %d %v", status, m)
	}
	reqs := srv.Requests()
	got, err := reqs[len(reqs)-1].InputItems()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[1].Type != "reasoning" || got[1].EncryptedContent == nil || *got[1].EncryptedContent != EncryptedContent(reasoning, 0) ||
		len(got[1].Summary) != 1 || got[1].Summary[0].Text != reasoning || got[2].CallID != "call_1" || got[3].Type != "function_call_output" ||
		got[0].Text() != "do it" {
		t.Errorf("input items %+v", got)
	}
	if _, err := reqs[0].InputItems(); err != nil {
		t.Errorf("the first request's items: %v", err)
	}
}

// What a request does not ask for, the reasoning item does not carry: no
// encrypted_content without include, no summary without
// reasoning.summary. With store left true, the item can be given back by
// id alone, in a later request or by item_reference, and a response is
// continued by previous_response_id.
func TestResponsesStoredItems(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{
		{Reasoning: "hidden", ToolCalls: []ToolCall{{ID: "call_7", Name: "shell", Arguments: `{}`}}},
		{Text: "one"}, {Text: "two"},
	}})
	defer srv.Close()
	_, m := postResponses(t, srv, `{"model":"o3","input":"hi"}`)
	out := m["output"].([]any)
	rs := out[0].(map[string]any)
	if rs["type"] != "reasoning" || rs["encrypted_content"] != nil || len(rs["summary"].([]any)) != 0 {
		t.Fatalf("reasoning item %v", rs)
	}
	id := m["id"].(string)
	output := `{"type":"function_call_output","call_id":"call_7","output":"ok"}`
	// A string among the items is no item.
	if status, m := postResponses(t, srv, `{"model":"o3","input":["hi",`+output+`]}`); status != http.StatusBadRequest ||
		errorOf(m)["message"] != "Invalid type for 'input[0]': expected an input item, but got a string instead." {
		t.Errorf("a string item: %d %v", status, m)
	}
	if status, m := postResponses(t, srv, `{"model":"o3","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_fake_1","summary":[]},{"type":"item_reference","id":"fc_call_7"},`+output+`]}`); status != http.StatusOK {
		t.Errorf("stored items by id: %d %v", status, m)
	}
	if status, m := postResponses(t, srv, `{"model":"o3","previous_response_id":"`+id+`","input":[`+output+`]}`); status != http.StatusOK {
		t.Errorf("continued by previous_response_id: %d %v", status, m)
	}
}
