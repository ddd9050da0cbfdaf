package llmtest

import (
	"encoding/json"
	"errors"
	"strings"
)

// InputItem is one item of a Responses API request's input, as a test
// reads it back from the recorded request (RecordedRequest.InputItems):
// the members a check needs, and the item whole in Raw.
type InputItem struct {
	// Type is the item's type; an item without one is a "message", as
	// the API takes it.
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Role and Content are a message's.
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// Summary and EncryptedContent are a reasoning item's (nil when it
	// has none).
	Summary          []SummaryText `json:"summary,omitempty"`
	EncryptedContent *string       `json:"encrypted_content,omitempty"`
	// CallID, Name, Arguments (a function_call's), Input (a
	// custom_tool_call's), Action (a local_shell_call's) and Output (an
	// output's: a string or an array of content) are the tool calls' and
	// their outputs'.
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Input     string          `json:"input,omitempty"`
	Action    json.RawMessage `json:"action,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Status    string          `json:"status,omitempty"`
	// Raw is the item as the client sent it.
	Raw json.RawMessage `json:"-"`
}

// SummaryText is one part of a reasoning item's summary.
type SummaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Text is a message's text: its content when that is a string, or its
// text parts joined.
func (it InputItem) Text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(it.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// InputItems reads the input of a recorded Responses API request as
// items, a string input being one user message: what the client gave
// back of the reasoning, calls and outputs before. It fails for a request
// of another API, or one whose input is not a string or an array of
// objects.
func (r RecordedRequest) InputItems() ([]InputItem, error) {
	if r.Path != "/v1/responses" {
		return nil, errors.New("llmtest: " + r.Path + " is not a Responses API request")
	}
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil {
		return nil, err
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		content, _ := json.Marshal(s)
		return []InputItem{{Type: "message", Role: "user", Content: content, Raw: req.Input}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(req.Input, &raws); err != nil {
		return nil, err
	}
	items := make([]InputItem, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			return nil, err
		}
		if items[i].Type == "" {
			items[i].Type = "message"
		}
		items[i].Raw = raw
	}
	return items, nil
}
