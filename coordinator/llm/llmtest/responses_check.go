package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The Responses API checks a request's input before it is served, and so
// does the stand-in: what the real API refuses is refused here with the
// real API's status, error param, code and words, so that a client the
// stand-in serves is one the real API serves too.
//
// Every refusal is a row of responsesRules. Where the words come from is
// said in the row: an issue report quoting the real API's body, a
// client's or a proxy's test recording what the API answered, or, where
// no real answer could be found, that the words are the stand-in's own.
// Every refusal is invalid_request_error; param and code are null where
// the row has none.

// responsesRule is one way the Responses API refuses a request.
type responsesRule struct {
	status int
	// param is the error's param as a pattern (N the item's index, F
	// its member); "" is null.
	param string
	code  string // "" is null
	words string // a format of the refusal's details
}

// The refusals, by what the request did wrong.
const (
	rsInputMissing      = "input missing"
	rsInputEmpty        = "input empty"
	rsInputType         = "input not a string or an array of items"
	rsItemNotObject     = "an item not an object"
	rsItemType          = "an unknown item type"
	rsItemRole          = "a message without a known role"
	rsItemMissing       = "an item without a required member"
	rsItemMemberType    = "an item member not a string"
	rsReasoningContent  = "reasoning given back with its text"
	rsPreviousNotFound  = "an unknown previous_response_id"
	rsItemNotFound      = "an item by an id never persisted"
	rsReasoningNoState  = "reasoning with neither id nor encrypted_content, store false"
	rsEncryptedContent  = "encrypted_content the API did not issue"
	rsNoCall            = "a function_call_output for no function call"
	rsNoCustomCall      = "a custom_tool_call_output for no custom tool call"
	rsNoOutput          = "a function_call without its output"
	rsNoCustomOutput    = "a custom_tool_call without its output"
	rsNoShellOutput     = "a local_shell_call without its output"
	rsWithoutReasoning  = "an item given back by id without its reasoning"
	rsReasoningFollowed = "reasoning given back by id without the item after it"
)

// notPersisted ends rsItemNotFound's words when the request's store is
// false.
const notPersisted = " Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."

// responsesRules is every refusal of the Responses API's checks.
var responsesRules = map[string]responsesRule{
	// The measured answers of kangminlee-maker/local-OAuth-CLI-API-adapter
	// (test/openai-responses-validation-parity.test.mjs at 4eb54c7c: "every
	// row is a DIRECT API observation taken 2026-08-30 against
	// gpt-5.6-terra"), for input and its items.
	rsInputMissing: {http.StatusBadRequest, "input", "missing_required_parameter", "Missing required parameter: 'input'."},
	rsInputEmpty: {http.StatusBadRequest, "", "missing_required_parameter",
		`One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`},
	// "expected one of a string or array of input items" for an object or
	// a number, "expected a string" for null, as measured.
	rsInputType:     {http.StatusBadRequest, "input", "invalid_type", "Invalid type for 'input': expected %s, but got %s instead."},
	rsItemNotObject: {http.StatusBadRequest, "input[N]", "invalid_type", "Invalid type for 'input[%d]': expected an input item, but got %s instead."},
	rsItemType:      {http.StatusBadRequest, "input[N]", "invalid_value", "Invalid value: '%s'. Supported values are: %s."},
	rsItemRole:      {http.StatusBadRequest, "input[N]", "invalid_value", "Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'."},
	// Measured for a message's content (the same test), a
	// function_call_output's call_id and output (openai-python's
	// BadRequestError quoted in a developer's notes), and a reasoning
	// item's summary (microsoft/agent-framework-go#784).
	rsItemMissing: {http.StatusBadRequest, "input[N].F", "missing_required_parameter", "Missing required parameter: 'input[%d].%s'."},
	// The API's sentence for a member of the wrong type, measured for the
	// request's own members ('model', 'instructions', 'user'); for an
	// item's member it is the stand-in's application of it.
	rsItemMemberType: {http.StatusBadRequest, "input[N].F", "invalid_type", "Invalid type for 'input[%d].%s': expected a string, but got %s instead."},
	// A reasoning item given back with its plain text: the first sentence
	// is the API's (microsoft/agent-framework-go#784); the rest and the
	// code follow the API's measured sentence for a too long member
	// ("Invalid 'metadata': too many properties. Expected an object with
	// at most 16 properties, but got an object with 17 properties
	// instead.", object_above_max_properties).
	rsReasoningContent: {http.StatusBadRequest, "input[N].content", "array_above_max_length",
		"Invalid 'input[%d].content': array too long. Expected an array with maximum length 0, but got an array with length %d instead."},
	// Measured (the parity test above).
	rsPreviousNotFound: {http.StatusBadRequest, "previous_response_id", "previous_response_not_found", "Previous response with id '%s' not found."},
	// HTTP 404, param input: vercel/ai#10290 (statusCode 404, the body
	// whole), openai-agents-python#2265 (NotFoundError, with store false
	// the sentence notPersisted adds), vercel/ai#7543.
	rsItemNotFound: {http.StatusNotFound, "input", "", "Item with id '%s' not found.%s"},
	// A reasoning item with neither an id to look up nor encrypted_content
	// to read, while nothing is stored: no report of the real API's
	// answer was found (clients that dropped encrypted_content sent the
	// id and met rsItemNotFound). These words are the stand-in's own.
	rsReasoningNoState: {http.StatusBadRequest, "input", "", "Reasoning input items must have `encrypted_content` when `store` is false"},
	// openai/codex#8145, #8119, #8132: the content abbreviated to its
	// first and last four characters.
	rsEncryptedContent: {http.StatusBadRequest, "", "invalid_encrypted_content", "The encrypted content %s could not be verified."},
	// continuedev/continue#10092 (the body whole), james-6-23/codex2api#414.
	rsNoCall: {http.StatusBadRequest, "input", "", "No tool call found for function call output with call_id %s."},
	// The words Responses proxies match on codex's traffic, including
	// for a function_call answered by a custom_tool_call_output (an
	// OpenSpec requirement of one: "upstream returns No tool call found
	// for custom tool call output with call_id X and input contains a
	// real standard call plus private output for X"); no issue report
	// with the whole body was found. The reverse, a function_call_output
	// for a custom_tool_call, is refused by rsNoCall by the same rule,
	// which no report shows.
	rsNoCustomCall: {http.StatusBadRequest, "input", "", "No tool call found for custom tool call output with call_id %s."},
	// tjardoo/openai-client#124 (the body whole: param input, code null).
	rsNoOutput: {http.StatusBadRequest, "input", "", "No tool output found for function call %s."},
	// diegosouzapw/OmniRoute#8946 (HTTP 400), Soju06/codex-lb#1168
	// (param input).
	rsNoCustomOutput: {http.StatusBadRequest, "input", "", "No tool output found for custom tool call %s."},
	// No report found: the stand-in's words, after the two above.
	rsNoShellOutput: {http.StatusBadRequest, "input", "", "No tool output found for local shell call %s."},
	// Item ids link an answer's items to the reasoning before them; an
	// item given back without it: continuedev/continue#10018, #10880 and
	// mastra-ai/mastra#8738 (HTTP 400, the body whole), for a message too
	// (continuedev/continue#12620).
	rsWithoutReasoning: {http.StatusBadRequest, "input", "", "Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'."},
	// continuedev/continue#8933, #10428 (the body whole).
	rsReasoningFollowed: {http.StatusBadRequest, "input", "", "Item '%s' of type 'reasoning' was provided without its required following item."},
}

// responsesItemTypes are the input item types the API knows, in the order
// its refusal lists them (measured 2026-08-30, the parity test above).
var responsesItemTypes = []string{"additional_tools", "agent_message", "apply_patch_call", "apply_patch_call_output",
	"code_interpreter_call", "compaction", "compaction_trigger", "computer_call", "computer_call_output", "custom_tool_call",
	"custom_tool_call_output", "file_search_call", "function_call", "function_call_output", "image_generation_call",
	"item_reference", "local_shell_call", "local_shell_call_output", "mcp_approval_request", "mcp_approval_response",
	"mcp_call", "mcp_list_tools", "message", "multi_agent_call", "multi_agent_call_output", "program", "program_output",
	"reasoning", "shell_call", "shell_call_output", "tool_search_call", "tool_search_output", "web_search_call"}

// requiredMembers are the members an item of each type must have.
var requiredMembers = map[string][]string{
	"message":                 {"content"},
	"reasoning":               {"summary"},
	"function_call":           {"call_id", "name", "arguments"},
	"function_call_output":    {"call_id", "output"},
	"custom_tool_call":        {"call_id", "name", "input"},
	"custom_tool_call_output": {"call_id", "output"},
	"local_shell_call":        {"call_id", "action"},
	"item_reference":          {"id"},
}

// stringMembers are the members that must be strings when they are there
// (an input is a string only in a custom_tool_call).
var stringMembers = []string{"id", "call_id", "name", "arguments"}

// rsRefusal is a refusal made: its status, its words and the whole body.
type rsRefusal struct {
	status  int
	message string
	body    string
}

// refuse makes the refusal of rule with param and the words' arguments.
func refuse(rule, param string, args ...any) *rsRefusal {
	r, ok := responsesRules[rule]
	if !ok {
		panic("llmtest: no Responses refusal " + rule)
	}
	msg := fmt.Sprintf(r.words, args...)
	return &rsRefusal{status: r.status, message: msg, body: openaiError(msg, "invalid_request_error", param, r.code)}
}

// openaiError is OpenAI's error body, param and code null when empty.
func openaiError(message, typ, param, code string) string {
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	// In the order OpenAI sends them, which a map would not keep.
	var out bytes.Buffer
	out.WriteString(`{"error":{"message":`)
	m, _ := json.Marshal(message)
	out.Write(m)
	for _, kv := range [][2]any{{"type", typ}, {"param", orNull(param)}, {"code", orNull(code)}} {
		v, _ := json.Marshal(kv[1])
		fmt.Fprintf(&out, `,%q:%s`, kv[0], v)
	}
	out.WriteString("}}")
	return out.String()
}

// quoteList is values as the API lists them: 'a', 'b', and 'c'.
func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

// jsonKind is how the API names a JSON value's type: "an object", "an
// integer", "null"…
func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0 || string(t) == "null":
		return "null"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	case string(t) == "true" || string(t) == "false":
		return "a boolean"
	case bytes.ContainsAny(t, ".eE"):
		return "a decimal"
	}
	return "an integer"
}

// responsesRequest is the part of a Responses API request the stand-in
// checks, caches on and answers from.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Store        *bool           `json:"store"`
	Include      []string        `json:"include"`
	Instructions json.RawMessage `json:"instructions"`
	Tools        json.RawMessage `json:"tools"`
	ToolChoice   json.RawMessage `json:"tool_choice"`
	Reasoning    *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	PromptCacheKey     string `json:"prompt_cache_key"`
	PreviousResponseID string `json:"previous_response_id"`

	// items is the input as items (a string is one user message);
	// history the items of the stored responses previous_response_id
	// continues, before them.
	items   []json.RawMessage
	history []json.RawMessage
}

// stored reports whether the API keeps the response (store defaults to
// true).
func (q *responsesRequest) stored() bool { return q.Store == nil || *q.Store }

// wantsEncrypted reports whether reasoning items come with their
// encrypted_content, which the API sends only when asked.
func (q *responsesRequest) wantsEncrypted() bool {
	return slices.Contains(q.Include, "reasoning.encrypted_content")
}

// wantsSummary reports whether reasoning items come with a summary.
func (q *responsesRequest) wantsSummary() bool {
	return q.Reasoning != nil && q.Reasoning.Summary != nil && *q.Reasoning.Summary != "" && *q.Reasoning.Summary != "none"
}

// rsItem is an input item as the checks read it.
type rsItem struct {
	index   int // in the request's input; -1 for the history's
	typ     string
	id      string
	callID  string
	enc     *string // encrypted_content, nil when absent or null
	members map[string]json.RawMessage
	raw     json.RawMessage
}

// str is a member as a string, "" when absent or not a string.
func (it *rsItem) str(name string) string {
	var s string
	_ = json.Unmarshal(it.members[name], &s)
	return s
}

// present reports whether a member is there and not null.
func present(members map[string]json.RawMessage, name string) bool {
	v, ok := members[name]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// inputItems reads a request's input as items, a string being one user
// message, and says which rule it breaks when it is neither.
func inputItems(fields map[string]json.RawMessage, input json.RawMessage) ([]json.RawMessage, *rsRefusal) {
	if _, ok := fields["input"]; !ok {
		return nil, refuse(rsInputMissing, "input")
	}
	if jsonKind(input) == "null" {
		return nil, refuse(rsInputType, "input", "a string", "an object")
	}
	elsewhere := present(fields, "previous_response_id") || present(fields, "prompt") || present(fields, "conversation")
	var s string
	if json.Unmarshal(input, &s) == nil {
		if s == "" {
			if elsewhere {
				return nil, nil
			}
			return nil, refuse(rsInputEmpty, "")
		}
		msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": s})
		return []json.RawMessage{msg}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(input, &items); err != nil {
		return nil, refuse(rsInputType, "input", "one of a string or array of input items", jsonKind(input))
	}
	if len(items) == 0 && !elsewhere {
		return nil, refuse(rsInputEmpty, "")
	}
	return items, nil
}

// readItem checks one input item's shape: an object of a known type with
// its required members, of the right types.
func readItem(i int, raw json.RawMessage) (*rsItem, *rsRefusal) {
	at := fmt.Sprintf("input[%d]", i)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, refuse(rsItemNotObject, at, i, jsonKind(raw))
	}
	it := &rsItem{index: i, members: members, raw: raw}
	if t, ok := members["type"]; ok {
		_ = json.Unmarshal(t, &it.typ) // a type that is no string is ''
		if !slices.Contains(responsesItemTypes, it.typ) {
			return nil, refuse(rsItemType, at, it.typ, quoteList(responsesItemTypes))
		}
	} else {
		// An item without a type is a message (EasyInputMessage).
		it.typ = "message"
	}
	if it.typ == "message" {
		role := it.str("role")
		if !slices.Contains([]string{"assistant", "system", "developer", "user"}, role) {
			return nil, refuse(rsItemRole, at, role)
		}
	}
	for _, m := range requiredMembers[it.typ] {
		if _, ok := members[m]; !ok {
			return nil, refuse(rsItemMissing, at+"."+m, i, m)
		}
	}
	for _, m := range stringMembers {
		if v, ok := members[m]; ok && jsonKind(v) != "a string" && jsonKind(v) != "null" {
			return nil, refuse(rsItemMemberType, at+"."+m, i, m, jsonKind(v))
		}
	}
	if v, ok := members["input"]; ok && it.typ == "custom_tool_call" && jsonKind(v) != "a string" {
		return nil, refuse(rsItemMemberType, at+".input", i, "input", jsonKind(v))
	}
	if it.typ == "reasoning" {
		var content []json.RawMessage
		if json.Unmarshal(members["content"], &content) == nil && len(content) > 0 {
			return nil, refuse(rsReasoningContent, at+".content", i, len(content))
		}
		if present(members, "encrypted_content") {
			var enc string
			if json.Unmarshal(members["encrypted_content"], &enc) == nil {
				it.enc = &enc
			}
		}
	}
	it.id, it.callID = it.str("id"), it.str("call_id")
	return it, nil
}

// issuedItem is an output item the stand-in answered with, kept for the
// checks of the requests that give it back.
type issuedItem struct {
	typ string
	// reasoning is the reasoning item before it in its answer, which it
	// may not be given back without; following, for a reasoning item,
	// the item after it.
	reasoning, following string
	stored               bool // its request's store was not false
	raw                  json.RawMessage
}

// responsesMemory is what the Responses API remembers between requests:
// the items it answered with and the responses it stored.
type responsesMemory struct {
	items     map[string]*issuedItem
	encrypted map[string]string            // encrypted_content it issued -> its reasoning item's id
	responses map[string][]json.RawMessage // stored response id -> its history, input and output
}

// abbreviated is encrypted content as the API's refusal shows it: its
// first and last four characters.
func abbreviated(s string) string {
	if len(s) <= 8 {
		return s
	}
	return s[:4] + "..." + s[len(s)-4:]
}

// EncryptedContent is the encrypted_content of the reasoning item the
// stand-in answers the request numbered request (RecordedRequest.Index)
// with, whose summary is summary (the response's Reasoning): opaque and
// deterministic, so a test can check that a client gives it back byte
// for byte. The stand-in accepts it back only from the server that made
// it, as the real API accepts only its own.
func EncryptedContent(summary string, request int) string {
	sum := sha256.Sum256([]byte("llmtest reasoning\x00" + strconv.Itoa(request) + "\x00" + summary))
	return "enc_" + hex.EncodeToString(sum[:16])
}

// checkResponses checks a Responses request as the real API does, in the
// order it does: the input's shape, then what it refers to (a previous
// response, items by id, encrypted reasoning), then the pairing of tool
// calls and outputs and of items and their reasoning.
func (s *Server) checkResponses(req *responsesRequest, body []byte) *rsRefusal {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields)
	items, r := inputItems(fields, fields["input"])
	if r != nil {
		return r
	}
	req.items = items
	read := make([]*rsItem, len(items))
	for i, raw := range items {
		if read[i], r = readItem(i, raw); r != nil {
			return r
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	mem := &s.rs
	if id := req.PreviousResponseID; id != "" {
		history, ok := mem.responses[id]
		if !ok {
			return refuse(rsPreviousNotFound, "previous_response_id", id)
		}
		req.history = history
	}
	suffix := ""
	if !req.stored() {
		suffix = notPersisted
	}
	var all []*rsItem
	for i, raw := range req.history {
		it, _ := readItem(i, raw)
		if it != nil {
			it.index = -1
			all = append(all, it)
		}
	}
	for _, it := range read {
		switch {
		case it.typ == "item_reference":
			got := mem.items[it.id]
			if got == nil || !got.stored {
				return refuse(rsItemNotFound, "input", it.id, suffix)
			}
			ref, _ := readItem(it.index, got.raw)
			ref.index = it.index
			it = ref
		case it.typ == "reasoning" && it.enc != nil:
			if _, ours := mem.encrypted[*it.enc]; !ours && !s.replayed[*it.enc] {
				return refuse(rsEncryptedContent, "", abbreviated(*it.enc))
			}
		case it.typ == "reasoning" && it.id != "":
			if got := mem.items[it.id]; got == nil || !got.stored {
				return refuse(rsItemNotFound, "input", it.id, suffix)
			}
		case it.typ == "reasoning" && !req.stored():
			return refuse(rsReasoningNoState, "input")
		}
		all = append(all, it)
	}
	if r := checkCallOutputs(all); r != nil {
		return r
	}
	return checkReasoningLinks(all, mem)
}

// checkCallOutputs enforces the pairing of tool calls and their outputs:
// an output answers a call of its kind made earlier in the input, and
// every call has its output after it.
func checkCallOutputs(items []*rsItem) *rsRefusal {
	calls := map[string]string{} // call_id -> the call's type
	answered := map[string]bool{}
	for _, it := range items {
		switch it.typ {
		case "function_call", "custom_tool_call", "local_shell_call":
			calls[it.callID] = it.typ
		case "function_call_output":
			if t := calls[it.callID]; t != "function_call" && t != "local_shell_call" {
				return refuse(rsNoCall, "input", it.callID)
			}
			answered[it.callID] = true
		case "custom_tool_call_output":
			if calls[it.callID] != "custom_tool_call" {
				return refuse(rsNoCustomCall, "input", it.callID)
			}
			answered[it.callID] = true
		case "local_shell_call_output":
			answered[it.callID] = true
			answered[it.id] = true
		}
	}
	for _, it := range items {
		if answered[it.callID] {
			continue
		}
		switch it.typ {
		case "function_call":
			return refuse(rsNoOutput, "input", it.callID)
		case "custom_tool_call":
			return refuse(rsNoCustomOutput, "input", it.callID)
		case "local_shell_call":
			if !answered[it.id] {
				return refuse(rsNoShellOutput, "input", it.callID)
			}
		}
	}
	return nil
}

// checkReasoningLinks enforces what the ids of the stand-in's own items
// say: an item given back by id comes after the reasoning item that
// preceded it in its answer, and a reasoning item given back by id is
// followed by an item. A reasoning item without an id is known by the
// encrypted_content the stand-in gave it.
func checkReasoningLinks(items []*rsItem, mem *responsesMemory) *rsRefusal {
	seen := map[string]bool{}
	for i, it := range items {
		if it.typ == "reasoning" {
			seen[it.id] = true
			if it.enc != nil {
				seen[mem.encrypted[*it.enc]] = true
			}
			if it.id != "" && (i == len(items)-1 || items[i+1].typ == "reasoning") {
				return refuse(rsReasoningFollowed, "input", it.id)
			}
			continue
		}
		if got := mem.items[it.id]; it.id != "" && got != nil && got.reasoning != "" && !seen[got.reasoning] {
			return refuse(rsWithoutReasoning, "input", it.id, it.typ, got.reasoning)
		}
	}
	return nil
}

// check parses and checks a Responses request before it is served, and
// looks up what it reads from the prompt cache.
func (responsesAPI) check(x *exchange, body []byte) (int, string) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, "fake model: cannot decode request: " + err.Error()
	}
	if msg, errBody := responsesSchemaRefusal(body); msg != "" {
		x.errBody = errBody
		return http.StatusBadRequest, msg
	}
	if r := x.s.checkResponses(&req, body); r != nil {
		x.errBody = r.body
		return r.status, r.message
	}
	x.rsp = &req
	if sc := x.s.scenario; sc != nil && sc.PromptCache {
		x.cache = x.s.lookupResponsesCache(&req, quarter(len(body)))
	}
	return 0, ""
}
