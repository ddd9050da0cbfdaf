package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A streamed Responses API answer is a sequence of server-sent events,
// each an "event: <type>" line and a "data: <json>" line whose JSON names
// the type again and carries a sequence_number: response.created and
// response.in_progress; for each output item response.output_item.added
// {output_index, item}, its deltas (response.output_text.delta,
// response.reasoning_summary_text.delta, response.function_call_arguments
// .delta, response.custom_tool_call_input.delta, each with the item's
// output_index) among the parts' added and done events, and
// response.output_item.done with the whole item (a reasoning item with
// its encrypted_content, a local_shell_call with its action); then one
// terminal event: response.completed (the usage), response.incomplete
// (incomplete_details.reason), response.failed (response.error) or error
// (code and message at the top). Only the data lines are read.

// responsesEvent is the union of the events' fields ralph reads.
type responsesEvent struct {
	Type         string           `json:"type"`
	OutputIndex  int              `json:"output_index"`
	SummaryIndex int              `json:"summary_index"`
	Delta        string           `json:"delta"`
	Item         json.RawMessage  `json:"item"`
	Response     *responsesObject `json:"response"`
	// An error event's own fields, and the error object some servers
	// put in it instead.
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
	Error   json.RawMessage `json:"error"`
}

// responsesObject is the response a terminal event carries.
type responsesObject struct {
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *responsesUsage `json:"usage"`
}

// responsesUsage is the Responses API's usage: input_tokens counts the
// cached tokens too, and output_tokens the reasoning tokens.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// usage is the counts in ralph's terms.
func (u responsesUsage) usage() conversation.Usage {
	out := conversation.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if d := u.InputTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// itemFields are the fields of an output item ralph reads.
type itemFields struct {
	Type      string          `json:"type"`
	Status    string          `json:"status"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Input     *string         `json:"input"`
	Action    json.RawMessage `json:"action"`
	// Content is a message's parts (output_text, refusal) or a reasoning
	// item's (reasoning_text, or null).
	Content          json.RawMessage `json:"content"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent json.RawMessage `json:"encrypted_content"`
}

// textPart is a part of a message's or a reasoning item's content.
type textPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// outItem is one output item as it streams in.
type outItem struct {
	typ, callID, name string
	text              strings.Builder // a message's text, a call's arguments or input, the reasoning shown
	part              int             // the summary part the reasoning's deltas are of
	whole             *itemFields     // the item as response.output_item.done gave it
	announced         bool            // its ToolName, Text or Reasoning was passed on
}

// responsesTurn assembles one answer.
type responsesTurn struct {
	emit func(Delta)
	// localShell is the name local_shell calls get: the built-in tool's
	// name in the request (ToolDef.Builtin).
	localShell string
	items      []*outItem
	usage      responsesUsage
	sawUsage   bool
	// incomplete is response.incomplete's reason, refused set by a
	// refusal part of the text.
	incomplete string
	refused    bool
	done       bool        // a terminal event arrived
	failure    serverError // response.failed's or the error event's error
}

func newResponsesTurn(emit func(Delta), req Request) *responsesTurn {
	t := &responsesTurn{emit: emit, localShell: callLocalShell}
	for _, d := range req.Tools {
		if d.Builtin == callLocalShell {
			t.localShell = d.Name
		}
	}
	return t
}

// read consumes the stream until a terminal event, an error, or its end.
// Its error is the reader's, one of an event that is not JSON, or
// errStreamError.
func (t *responsesTurn) read(r io.Reader) error {
	return readEvents(r, t.handle, func() bool { return t.done })
}

func (t *responsesTurn) handle(data []byte) error {
	if len(data) == 0 || string(data) == "[DONE]" {
		return nil
	}
	var ev responsesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("%w: an event that is not JSON: %w", ErrBrokenStream, err)
	}
	switch ev.Type {
	case "response.output_item.added":
		t.added(ev.OutputIndex, ev.Item)
	case "response.output_text.delta", "response.refusal.delta":
		if it := t.at(ev.OutputIndex, "message"); it != nil && ev.Delta != "" {
			it.text.WriteString(ev.Delta)
			it.announced = true
			t.refused = t.refused || ev.Type == "response.refusal.delta"
			t.emit(Delta{Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := t.at(ev.OutputIndex, "reasoning"); it != nil && ev.Delta != "" {
			t.reason(it, ev.SummaryIndex, ev.Delta)
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if it := t.at(ev.OutputIndex, ""); it != nil {
			it.text.WriteString(ev.Delta)
		}
	case "response.output_item.done":
		t.finished(ev.OutputIndex, ev.Item)
	case "response.completed", "response.incomplete":
		t.done = true
		if r := ev.Response; r != nil {
			if r.Usage != nil {
				t.usage, t.sawUsage = *r.Usage, true
			}
			if ev.Type == "response.incomplete" {
				t.incomplete = "max_output_tokens"
				if d := r.IncompleteDetails; d != nil && d.Reason != "" {
					t.incomplete = d.Reason
				}
			}
		}
	case "response.failed":
		var e json.RawMessage
		if ev.Response != nil {
			e = ev.Response.Error
		}
		t.failure = errorOf(e, "the response failed")
		return errStreamError
	case "error":
		if len(ev.Error) > 0 && !isNull(ev.Error) {
			t.failure = errorOf(ev.Error, "an error event")
		} else {
			t.failure = errorOf(mustObject(ev.Code, ev.Message), "an error event")
		}
		return errStreamError
	}
	// Every other event (the response's creation, parts added and done,
	// the whole text or arguments again) adds nothing to the answer.
	return nil
}

// errorOf reads an error object ({"code","message"}) as the error table
// does; what names the failure when there is no such object.
func errorOf(raw json.RawMessage, what string) serverError {
	if len(raw) > 0 && !isNull(raw) {
		if se, ok := parseErrorJSON(append(append([]byte(`{"error":`), raw...), '}')); ok {
			return se
		}
	}
	return serverError{shape: shapeText, message: what + " without an error object"}
}

// mustObject is an error event's top-level code and message as one
// error object.
func mustObject(code, message json.RawMessage) json.RawMessage {
	if len(code) == 0 {
		code = json.RawMessage("null")
	}
	if len(message) == 0 {
		message = json.RawMessage("null")
	}
	return json.RawMessage(`{"code":` + string(code) + `,"message":` + string(message) + `}`)
}

// at is the item at an output index, made of typ when an event names
// one the stream did not add first; nil for an index out of reason.
func (t *responsesTurn) at(index int, typ string) *outItem {
	if index < 0 || index > 1<<16 {
		return nil
	}
	for len(t.items) <= index {
		t.items = append(t.items, nil)
	}
	if t.items[index] == nil {
		if typ == "" {
			return nil
		}
		t.items[index] = &outItem{typ: typ}
	}
	return t.items[index]
}

// added starts an item; a call is announced by its name.
func (t *responsesTurn) added(index int, raw json.RawMessage) {
	var f itemFields
	_ = json.Unmarshal(raw, &f)
	if f.Type == "" || index < 0 || index > 1<<16 {
		return
	}
	for len(t.items) <= index {
		t.items = append(t.items, nil)
	}
	it := &outItem{typ: f.Type, callID: f.CallID, name: f.Name}
	t.items[index] = it
	t.announce(it)
}

// announce passes on a call's name, once.
func (t *responsesTurn) announce(it *outItem) {
	if it.announced {
		return
	}
	switch it.typ {
	case "function_call", "custom_tool_call":
		if it.name == "" {
			return
		}
		t.emit(Delta{ToolName: it.name})
	case "local_shell_call":
		t.emit(Delta{ToolName: t.localShell})
	default:
		return
	}
	it.announced = true
}

// reason adds a piece of the reasoning shown, a blank line between the
// summary's parts.
func (t *responsesTurn) reason(it *outItem, part int, s string) {
	if part != it.part && it.text.Len() > 0 {
		s = "\n\n" + s
	}
	it.part = part
	it.text.WriteString(s)
	it.announced = true
	t.emit(Delta{Reasoning: s})
}

// finished takes an item whole: what its deltas did not say (a server
// that sends none, a local_shell_call's action, a reasoning item's
// encrypted content), and a search the API ran.
func (t *responsesTurn) finished(index int, raw json.RawMessage) {
	var f itemFields
	if json.Unmarshal(raw, &f) != nil || f.Type == "" {
		return
	}
	it := t.at(index, f.Type)
	if it == nil {
		return
	}
	if it.typ != f.Type {
		*it = outItem{typ: f.Type}
	}
	it.whole = &f
	if f.CallID != "" {
		it.callID = f.CallID
	}
	if f.Name != "" {
		it.name = f.Name
	}
	switch f.Type {
	case "message":
		if text, refused := messageText(f.Content); !it.announced && text != "" {
			it.text.WriteString(text)
			it.announced = true
			t.refused = t.refused || refused
			t.emit(Delta{Text: text})
		}
	case "reasoning":
		if !it.announced {
			for i, s := range reasoningTexts(f) {
				t.reason(it, i, s)
			}
		}
	case "web_search_call":
		t.emit(Delta{Search: searchCall(f)})
	default:
		t.announce(it)
	}
}

// messageText is a message item's text, and whether a part of it was a
// refusal.
func messageText(content json.RawMessage) (string, bool) {
	var parts []textPart
	_ = json.Unmarshal(content, &parts)
	var b strings.Builder
	refused := false
	for _, p := range parts {
		switch p.Type {
		case "output_text":
			b.WriteString(p.Text)
		case "refusal":
			b.WriteString(p.Refusal)
			refused = true
		}
	}
	return b.String(), refused
}

// reasoningTexts are a reasoning item's summary texts, or its reasoning
// text when it has no summary.
func reasoningTexts(f itemFields) []string {
	var out []string
	for _, raw := range []json.RawMessage{f.Summary, f.Content} {
		var parts []textPart
		_ = json.Unmarshal(raw, &parts)
		for _, p := range parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// searchCall is a web_search_call item as the faces show it: its query,
// its sources when the API listed them, and its failure.
func searchCall(f itemFields) *SearchInfo {
	var a struct {
		Query   string            `json:"query"`
		Sources []json.RawMessage `json:"sources"`
	}
	_ = json.Unmarshal(f.Action, &a)
	s := &SearchInfo{Query: a.Query, Results: len(a.Sources)}
	if f.Status == "failed" {
		s.Error = "failed"
	}
	return s
}

// finish is the assembled answer, with its finish reason in ralph's
// (OpenAI's chat) words and the reasoning items kept, marked with
// provider and model (reasoningBlock).
func (t *responsesTurn) finish(provider, model string) (Response, error) {
	var out Response
	out.Message.Role = conversation.RoleAssistant
	var content, reasoning strings.Builder
	for i, it := range t.items {
		if it == nil {
			continue
		}
		switch it.typ {
		case "message":
			content.WriteString(it.text.String())
		case "reasoning":
			if s := it.text.String(); s != "" {
				if reasoning.Len() > 0 {
					reasoning.WriteString("\n\n")
				}
				reasoning.WriteString(s)
			}
			block, ok, err := t.keep(i, model)
			if err != nil {
				return Response{}, err
			}
			if ok {
				out.Message.Opaque = append(out.Message.Opaque, conversation.OpaqueBlock{Provider: provider, Block: block})
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			out.Message.ToolCalls = append(out.Message.ToolCalls, t.call(it))
		}
	}
	for i := range out.Message.ToolCalls {
		if out.Message.ToolCalls[i].ID == "" {
			out.Message.ToolCalls[i].ID = fmt.Sprintf("call_%d", i)
		}
	}
	out.Message.Content = content.String()
	out.Reasoning = reasoning.String()
	switch {
	case t.incomplete == "content_filter", t.refused:
		out.FinishReason = "content_filter"
	case t.incomplete != "":
		// max_output_tokens, or any reason added later: cut short.
		out.FinishReason = "length"
	case len(out.Message.ToolCalls) > 0:
		out.FinishReason = "tool_calls"
	default:
		out.FinishReason = "stop"
	}
	if t.sawUsage {
		out.Usage = t.usage.usage()
		out.read = t.usage.InputTokens
	}
	return out, nil
}

// call is a call item as ralph's tool call.
func (t *responsesTurn) call(it *outItem) conversation.ToolCall {
	tc := conversation.ToolCall{ID: it.callID, Name: it.name}
	var f itemFields
	if it.whole != nil {
		f = *it.whole
	}
	switch it.typ {
	case "function_call":
		tc.Arguments = it.text.String()
		if f.Arguments != nil {
			tc.Arguments = *f.Arguments
		}
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
	case "custom_tool_call":
		input := it.text.String()
		if f.Input != nil {
			input = *f.Input
		}
		tc.Arguments = customArguments(input)
	case "local_shell_call":
		tc.Name = t.localShell
		tc.Arguments = "{}"
		if a := bytes.TrimSpace(f.Action); len(a) > 1 && a[0] == '{' {
			tc.Arguments = string(a)
		}
	}
	return tc
}

// keep is the opaque block of the reasoning item at index i: the item as
// the API sent it, without its id and status, and the call it came
// before. A reasoning item without encrypted content is not kept: with
// store false the API takes none back without it, and a server that
// sends none (another vendor's Responses API) has nothing to carry.
func (t *responsesTurn) keep(i int, model string) (json.RawMessage, bool, error) {
	f := t.items[i].whole
	if f == nil || len(f.EncryptedContent) == 0 || isNull(f.EncryptedContent) {
		return nil, false, nil
	}
	var item bytes.Buffer
	item.WriteString(`{"type":"reasoning","summary":`)
	if err := compactOr(&item, f.Summary, "[]"); err != nil {
		return nil, false, fmt.Errorf("keep a reasoning item: %w", err)
	}
	if len(f.Content) > 0 && !isNull(f.Content) {
		item.WriteString(`,"content":`)
		if err := compactOr(&item, f.Content, "null"); err != nil {
			return nil, false, fmt.Errorf("keep a reasoning item: %w", err)
		}
	}
	item.WriteString(`,"encrypted_content":`)
	if err := compactOr(&item, f.EncryptedContent, "null"); err != nil {
		return nil, false, fmt.Errorf("keep a reasoning item: %w", err)
	}
	item.WriteByte('}')
	block, err := marshalPlain(reasoningBlock{Before: t.before(i), Model: model, Reasoning: item.Bytes()})
	if err != nil {
		return nil, false, fmt.Errorf("keep a reasoning item: %w", err)
	}
	return block, true, nil
}

// compactOr writes raw without its spaces, or or when there is none.
func compactOr(b *bytes.Buffer, raw json.RawMessage, or string) error {
	if len(raw) == 0 || isNull(raw) {
		b.WriteString(or)
		return nil
	}
	return json.Compact(b, raw)
}

// before is the call_id of the call that follows the item at index i
// (past other reasoning and the API's own searches), "" when the text or
// nothing does.
func (t *responsesTurn) before(i int) string {
	for _, it := range t.items[i+1:] {
		if it == nil {
			continue
		}
		switch it.typ {
		case "message":
			return ""
		case "function_call", "custom_tool_call", "local_shell_call":
			return it.callID
		}
	}
	return ""
}

// marshalPlain is json.Marshal without HTML escapes: the bytes a server
// sent (a summary's "<" or "&") are kept as they came, turn after turn.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
