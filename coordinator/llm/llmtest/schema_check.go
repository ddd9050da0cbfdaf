package llmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Structured outputs as the real APIs refuse them (testdata/structured_output
// has the real answers these words are copied from, and where from).
//
// OpenAI's strict mode (chat completions' response_format
// {"type":"json_schema","json_schema":{…,"strict":true}}, the Responses
// API's text.format) refuses, with HTTP 400, a schema with an object that
// does not set additionalProperties to false or does not list every one
// of its properties in required, naming the object by its path as a
// Python tuple. Anthropic's Messages API refuses a forced tool_choice
// ({"type":"tool"} or {"type":"any"}) with extended thinking on.

// thinkingForcedTool is the Messages API's refusal of a forced tool
// choice with thinking on.
const thinkingForcedTool = "Thinking may not be enabled when tool_choice forces tool use."

// strictSchemaRefusal is OpenAI's message for a strict schema called name
// that strict mode does not take, "" for one it takes.
func strictSchemaRefusal(name string, schema json.RawMessage) string {
	var tree any
	if json.Unmarshal(schema, &tree) != nil {
		return ""
	}
	why := strictProblem(tree, nil)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("Invalid schema for response_format '%s': %s", name, why)
}

// strictProblem is the first object under node (at path) strict mode
// refuses, in OpenAI's words, or "".
func strictProblem(node any, path []string) string {
	m, ok := node.(map[string]any)
	if !ok {
		return ""
	}
	props, _ := m["properties"].(map[string]any)
	if isObjectSchema(m) {
		if ap, ok := m["additionalProperties"]; !ok || ap != false {
			return fmt.Sprintf("In context=%s, 'additionalProperties' is required to be supplied and to be false.", pyTuple(path))
		}
		required := map[string]bool{}
		if list, ok := m["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		for _, k := range slices.Sorted(mapKeys(props)) {
			if !required[k] {
				return fmt.Sprintf("In context=%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", pyTuple(path), k)
			}
		}
	}
	for _, k := range slices.Sorted(mapKeys(props)) {
		if why := strictProblem(props[k], append(slices.Clip(path), "properties", k)); why != "" {
			return why
		}
	}
	if why := strictProblem(m["items"], append(slices.Clip(path), "items")); why != "" {
		return why
	}
	if list, ok := m["anyOf"].([]any); ok {
		for i, b := range list {
			if why := strictProblem(b, append(slices.Clip(path), "anyOf", strconv.Itoa(i))); why != "" {
				return why
			}
		}
	}
	for _, defs := range []string{"$defs", "definitions"} {
		if d, ok := m[defs].(map[string]any); ok {
			for _, k := range slices.Sorted(mapKeys(d)) {
				if why := strictProblem(d[k], append(slices.Clip(path), defs, k)); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, ok := m["properties"]
	return ok
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// pyTuple is a path as Python prints a tuple of it: () for the root,
// ('items',) for one element, ('properties', 'a') for more; an index
// (anyOf's) is a number.
func pyTuple(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if _, err := strconv.Atoi(p); err == nil && i > 0 && path[i-1] == "anyOf" {
			parts[i] = p
			continue
		}
		parts[i] = "'" + p + "'"
	}
	switch len(parts) {
	case 0:
		return "()"
	case 1:
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// openAIParamError is OpenAI's error body for a refused parameter.
func openAIParamError(message, param string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": param, "code": nil}})
	return string(b)
}

// chatSchemaRefusal is the refusal of a chat completions request's strict
// response_format, "" when there is none to refuse.
func chatSchemaRefusal(body []byte) string {
	var req struct {
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if json.Unmarshal(body, &req) != nil || req.ResponseFormat == nil || req.ResponseFormat.Type != "json_schema" {
		return ""
	}
	js := req.ResponseFormat.JSONSchema
	if js == nil || !js.Strict {
		return ""
	}
	if msg := strictSchemaRefusal(js.Name, js.Schema); msg != "" {
		return openAIParamError(msg, "response_format")
	}
	return ""
}

// responsesSchemaRefusal is the same for a Responses API request's
// text.format.
func responsesSchemaRefusal(body []byte) (message, errBody string) {
	var req struct {
		Text *struct {
			Format *struct {
				Type   string          `json:"type"`
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict *bool           `json:"strict"`
			} `json:"format"`
		} `json:"text"`
	}
	if json.Unmarshal(body, &req) != nil || req.Text == nil || req.Text.Format == nil || req.Text.Format.Type != "json_schema" {
		return "", ""
	}
	f := req.Text.Format
	if f.Strict != nil && !*f.Strict {
		return "", ""
	}
	msg := strictSchemaRefusal(f.Name, f.Schema)
	if msg == "" {
		return "", ""
	}
	return msg, openAIParamError(msg, "text.format.schema")
}

// forcedTool is the tool a Messages request's tool_choice forces, "" for
// none ({"type":"any"} forces one without naming it: "*").
func (m *messagesRequest) forcedTool() string {
	var tc struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if len(m.ToolChoice) == 0 || json.Unmarshal(m.ToolChoice, &tc) != nil {
		return ""
	}
	switch tc.Type {
	case "tool":
		return tc.Name
	case "any":
		return "*"
	}
	return ""
}

// forced is a scripted response as the answer to a request whose
// tool_choice forces a tool: the real API then answers with that tool's
// call alone, so a scripted text (the JSON a test wants as the call's
// input) becomes the call.
func (m *messagesRequest) forced(resp Response) Response {
	name := m.forcedTool()
	if name == "" || name == "*" || len(resp.ToolCalls) > 0 || resp.Text == "" {
		return resp
	}
	resp.ToolCalls = []ToolCall{{Name: name, Arguments: resp.Text}}
	resp.Text, resp.TextChunks = "", nil
	return resp
}
