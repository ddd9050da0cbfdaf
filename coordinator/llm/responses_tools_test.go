package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// applyPatch is codex's freeform apply_patch, as the recordings offer it
// (its grammar shortened).
var applyPatch = conversation.ToolDef{Name: "apply_patch", Description: "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
	Format: &conversation.ToolFormat{Type: "grammar", Syntax: "lark", Definition: "start: begin_patch hunk+ end_patch"}}

// localShell is the Responses API's built-in shell, as codex offers it to
// codex-mini-latest.
var localShell = conversation.ToolDef{Name: "local_shell", Builtin: "local_shell"}

// TestResponsesCustomToolRoundTrip: a freeform tool is offered as a
// custom tool; its call's raw input streams in and becomes Arguments
// {"input": …}; the next request gives the call back as a
// custom_tool_call with that input, and its result as a
// custom_tool_call_output, as codex does (exchange-gpt-5-codex.json).
func TestResponsesCustomToolRoundTrip(t *testing.T) {
	const patch = "*** Begin Patch\n*** Add File: a.txt\n+hello <world> & more\n*** End Patch\n"
	call := []string{
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"ctc_1","type":"custom_tool_call","status":"in_progress","call_id":"call_2","input":"","name":"apply_patch"}}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":1,"delta":` + quote(patch[:20]) + `}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":1,"delta":` + quote(patch[20:]) + `}`,
		`{"type":"response.custom_tool_call_input.done","item_id":"ctc_1","output_index":1,"input":` + quote(patch) + `}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_2","input":` + quote(patch) + `,"name":"apply_patch"}}`,
	}
	srv := serveRS(t,
		rsStream(rsStart(), rsReasoning(0, "rs_2", "patch it", "gAAAAENC2"), call, []string{rsCompleted(rsUsage)}),
		rsStream(rsStart(), rsMessage(0, "done"), []string{rsCompleted(rsUsage)}))
	c := rsClient(srv, responsesConfig())
	req := codexRequest("add a.txt")
	req.Tools = []conversation.ToolDef{applyPatch}
	var log deltaLog
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatal(err)
	}
	want := []conversation.ToolCall{{ID: "call_2", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** Add File: a.txt\n+hello <world> & more\n*** End Patch\n"}`}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || !reflect.DeepEqual(log.toolNames(), []string{"apply_patch"}) {
		t.Errorf("calls = %+v, names %q", resp.Message.ToolCalls, log.toolNames())
	}
	var in struct{ Input string }
	if err := json.Unmarshal([]byte(resp.Message.ToolCalls[0].Arguments), &in); err != nil || in.Input != patch {
		t.Errorf("arguments' input = %q (%v)", in.Input, err)
	}
	var b struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(srv.body(0), &b)
	if w := `[{"type":"custom","name":"apply_patch","description":"Use the ` + "`apply_patch`" + ` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}]`; string(b.Tools) != w {
		t.Errorf("tools = %s\nwant    %s", b.Tools, w)
	}

	req.Messages = append(req.Messages, resp.Message,
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_2", Name: "apply_patch", Content: "Success. Updated the following files:\nA a.txt\n"})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	items := inputOf(t, srv.body(1))
	if got := itemTypes(items); !reflect.DeepEqual(got, []string{"message:user", "reasoning", "custom_tool_call", "custom_tool_call_output"}) {
		t.Fatalf("items = %q", got)
	}
	if items[2]["input"] != patch || items[2]["call_id"] != "call_2" || items[2]["name"] != "apply_patch" || items[3]["call_id"] != "call_2" {
		t.Errorf("custom call given back as %v, %v", items[2], items[3])
	}
}

// TestResponsesLocalShellRoundTrip: codex-mini-latest's built-in
// local_shell is offered by type alone; its call's action is the call's
// Arguments, under the tool's name; the next request gives it back as a
// local_shell_call with its action and its result as a
// function_call_output, as codex does (exchange-codex-mini.json).
func TestResponsesLocalShellRoundTrip(t *testing.T) {
	const action = `{"type":"exec","command":["bash","-lc","echo hi > b.txt"],"timeout_ms":10000,"working_directory":null,"env":{},"user":null}`
	call := []string{
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"lsh_1","type":"local_shell_call","status":"in_progress","call_id":"call_1","action":` + action + `}}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"lsh_1","type":"local_shell_call","status":"completed","call_id":"call_1","action":` + action + `}}`,
	}
	srv := serveRS(t,
		rsStream(rsStart(), rsReasoning(0, "rs_1", "list", "gAAAAENC1"), call, []string{rsCompleted(rsUsage)}),
		rsStream(rsStart(), rsMessage(0, "done"), []string{rsCompleted(rsUsage)}))
	c := rsClient(srv, responsesConfig())
	req := codexRequest("do it")
	req.Model = "codex-mini-latest"
	req.Tools = []conversation.ToolDef{localShell, {Name: "update_plan", Description: "Updates the plan."}}
	var log deltaLog
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatal(err)
	}
	want := []conversation.ToolCall{{ID: "call_1", Name: "local_shell", Arguments: action}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || !reflect.DeepEqual(log.toolNames(), []string{"local_shell"}) {
		t.Errorf("calls = %+v, names %q", resp.Message.ToolCalls, log.toolNames())
	}
	if !strings.Contains(string(srv.body(0)), `"tools":[{"type":"local_shell"},{"type":"function","name":"update_plan"`) {
		t.Errorf("tools: %s", srv.body(0))
	}
	req.Messages = append(req.Messages, resp.Message,
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "local_shell", Content: ""})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	raw := string(srv.body(1))
	for _, w := range []string{
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"list"}],"encrypted_content":"gAAAAENC1"}`,
		`{"type":"local_shell_call","call_id":"call_1","status":"completed","action":` + action + `}`,
		`{"type":"function_call_output","call_id":"call_1","output":""}`,
	} {
		if !strings.Contains(raw, w) {
			t.Errorf("the second request lacks %s:\n%s", w, raw)
		}
	}
}

// TestResponsesInputRules: the system messages before the conversation
// are the instructions and a later one a developer message; a refused
// message and an empty turn are left out; a turn's text goes before its
// calls, with the reasoning that came before the text; a result whose
// call is gone is the person's text.
func TestResponsesInputRules(t *testing.T) {
	block := func(before, enc string) conversation.OpaqueBlock {
		return conversation.OpaqueBlock{Provider: "openai", Block: json.RawMessage(`{"before":"` + before + `","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[],"encrypted_content":"` + enc + `"}}`)}
	}
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "one"},
		{Role: conversation.RoleSystem, Content: "two"},
		{Role: conversation.RoleUser, Content: "refused", Refused: "HTTP 400: no"},
		{Role: conversation.RoleUser, Content: "task"},
		{Role: conversation.RoleAssistant},
		{Role: conversation.RoleAssistant, Content: "I'll look.", Opaque: []conversation.OpaqueBlock{block("", "E1"), block("call_1", "E2")},
			ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "bash", Arguments: ""}}},
		{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "bash", Content: "ok"},
		{Role: conversation.RoleTool, ToolCallID: "call_gone", Name: "bash", Content: "late"},
		{Role: conversation.RoleSystem, Content: "a note later on"},
	}
	instructions, items := responsesInput(New(responsesConfig()), Request{Model: codexModel, Messages: msgs})
	if instructions != "one\n\ntwo" {
		t.Errorf("instructions = %q", instructions)
	}
	got, _ := marshalPlain(items)
	want := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]},` +
		`{"type":"reasoning","summary":[],"encrypted_content":"E1"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"I'll look."}]},` +
		`{"type":"reasoning","summary":[],"encrypted_content":"E2"},` +
		`{"type":"function_call","call_id":"call_1","name":"bash","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"ok"},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"(The result of the call call_gone of bash, whose call is no longer in this conversation:)\nlate"}]},` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"a note later on"}]}]`
	if string(got) != want {
		t.Errorf("input =\n%s\nwant\n%s", got, want)
	}
}

// TestResponsesStreamAssembly: a server that sends no deltas, only whole
// items (another vendor's Responses API), still gives the text, the
// reasoning shown and the calls; a reasoning item without encrypted
// content is shown but not kept, as it cannot go back with store false.
func TestResponsesStreamAssembly(t *testing.T) {
	stream := rsStream(rsStart(), []string{
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"thinking aloud"}]}}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Here."}]}}`,
		`{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_9","name":"bash","arguments":"{\"command\":\"ls\"}"}}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
	})
	srv := serveRS(t, stream)
	var log deltaLog
	resp, err := rsClient(srv, responsesConfig()).Stream(context.Background(), codexRequest("go"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Here." || resp.Reasoning != "thinking aloud" || len(resp.Message.Opaque) != 0 || !resp.Usage.Estimated {
		t.Errorf("answer = %+v, reasoning %q, usage %+v", resp.Message, resp.Reasoning, resp.Usage)
	}
	want := []conversation.ToolCall{{ID: "call_9", Name: "bash", Arguments: `{"command":"ls"}`}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || !reflect.DeepEqual(log.toolNames(), []string{"bash"}) || !reflect.DeepEqual(log.texts(), []string{"Here."}) {
		t.Errorf("calls = %+v, names %q, texts %q", resp.Message.ToolCalls, log.toolNames(), log.texts())
	}
}

// FuzzResponsesStreamNeverPanics: whatever a Responses API stream
// carries, reading and assembling it returns an answer or an error,
// never a panic.
func FuzzResponsesStreamNeverPanics(f *testing.F) {
	f.Add(rsStream(rsStart(), rsReasoning(0, "rs_1", "s", "E"), rsCall(1, "call_1", "bash", `{"a":1}`), []string{rsCompleted(rsUsage)}))
	f.Add("data: {\"type\":\"response.output_text.delta\",\"output_index\":-1,\"delta\":\"x\"}\n")
	f.Add("data: {\"type\":\"response.output_item.added\",\"output_index\":70000,\"item\":{\"type\":\"function_call\"}}\n")
	f.Add("data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"encrypted_content\":5,\"summary\":{}}}\n")
	f.Add("data: {\"type\":\"error\",\"code\":null}\ndata: [DONE]\ndata: {not json\n")
	f.Fuzz(func(t *testing.T, stream string) {
		turn := newResponsesTurn(func(Delta) {}, Request{})
		_ = turn.read(strings.NewReader(stream))
		_, _ = turn.finish("openai", codexModel)
	})
}
