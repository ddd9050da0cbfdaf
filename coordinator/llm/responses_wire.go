package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// The request body of the Responses API, built so that it is the same
// bytes turn after turn for the same conversation: struct fields in a
// fixed order, no maps, the tools encoded once per set (tools.go), and
// the input items before everything that follows them, so that a
// request's body up to the end of the previous request's input is that
// request's body up to the same point. OpenAI's prompt cache reads the
// prompt's prefix (tools, instructions, input), keyed by prompt_cache_key.
//
// The conversation goes as input items, after the rules every server gets
// (sendable: an empty assistant turn and a refused message left out,
// consecutive user turns merged):
//
//   - The system messages before the conversation are the instructions; a
//     later one goes as a developer message.
//   - A person's message is a user message of input_text and input_image
//     parts (data: URLs).
//   - An assistant turn is its reasoning items, its text (an assistant
//     message of output_text) and its calls, in the order the model
//     produced them (reasoningBlock): a call of a freeform tool of this
//     request (ToolDef.Format) as a custom_tool_call whose input is the
//     Arguments' "input", a call of the built-in local_shell as a
//     local_shell_call whose action is the Arguments, any other as a
//     function_call. No item ids are sent: codex sends none, and with
//     store false an id the API did not persist is refused.
//   - A tool result is a custom_tool_call_output for a freeform tool's
//     call, a function_call_output for any other (local_shell's too, as
//     codex sends it), with the call's call_id; a turn's images of tool
//     results go in a user message after its outputs, as on chat
//     completions. A result whose call is not in the request (which the
//     API refuses: "No tool call found for function call output") goes
//     as the person's text naming the call.

// responsesHead and responsesOptions are POST /responses' body, in this
// order: the head, the input items, the tools, then the options. The
// body is put together by hand (responsesBody) so that the items, the
// kept reasoning above all, are written once rather than re-read by the
// encoder at every level.
type responsesHead struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
}

type responsesOptions struct {
	ToolChoice        string           `json:"tool_choice,omitempty"`
	ParallelToolCalls bool             `json:"parallel_tool_calls,omitempty"`
	Reasoning         *reasoningOption `json:"reasoning,omitempty"`
	Store             bool             `json:"store"`
	Stream            bool             `json:"stream"`
	Include           []string         `json:"include,omitempty"`
	PromptCacheKey    string           `json:"prompt_cache_key,omitempty"`
	MaxOutputTokens   int              `json:"max_output_tokens,omitempty"`
	Text              *responsesText   `json:"text,omitempty"`
}

// responsesText asks for the answer in a JSON Schema (Request.Schema):
// {"format":{"type":"json_schema","name",…,"schema",…,"strict":…}}.
type responsesText struct {
	Format responsesFormat `json:"format"`
}

type responsesFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// reasoningOption asks a reasoning model for its effort ("" for the
// model's default) and for a summary of its reasoning, which ralph shows
// as thinking.
type reasoningOption struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// rItem is one input item. A reasoning item kept in Message.Opaque goes
// back as raw, byte for byte; the others are messages, calls and their
// outputs, each with the fields of its type.
type rItem struct {
	raw json.RawMessage

	Type      string          `json:"type"`
	Role      string          `json:"role,omitempty"`
	Content   []rPart         `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments *string         `json:"arguments,omitempty"`
	Input     *string         `json:"input,omitempty"`
	Status    string          `json:"status,omitempty"`
	Action    json.RawMessage `json:"action,omitempty"`
	Output    *string         `json:"output,omitempty"`
}

// MarshalJSON sends a raw item as it came.
func (it rItem) MarshalJSON() ([]byte, error) {
	if it.raw != nil {
		return it.raw, nil
	}
	type plain rItem
	return marshalPlain(plain(it))
}

// rPart is one part of a message's content.
type rPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

// reasoningBlock is the opaque block (conversation.OpaqueBlock, marked
// with the client's provider) of one reasoning item of an answer:
//
//	{"before":"call_2","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[…],"encrypted_content":"…"}}
//
// Reasoning is the item as the API sent it whole in
// response.output_item.done, without its id and status (with store false
// the API refuses an id it did not persist, and status is output only):
// its summary, content and encrypted_content are the bytes received.
// Before is the call_id of the call that followed it in the answer, or ""
// when the text followed it or nothing did; a request puts it back right
// before that call, or before the turn's text (after the calls when the
// turn has none). A turn's text is put before its calls, where the models
// write it (a preamble, or the answer of a turn without calls); only a
// text written after a call would come back moved. Model is the model
// that reasoned: the encrypted reasoning is given back to that model
// alone, since only the backend that minted it can read it ("The
// encrypted content … could not be verified"), and a turn another model
// answered (a fallback, /model) goes back without it, as the API takes
// calls without their reasoning when no item ids are sent.
type reasoningBlock struct {
	Before    string          `json:"before"`
	Model     string          `json:"model"`
	Reasoning json.RawMessage `json:"reasoning"`
}

// responsesTool is a tool as the Responses API takes it: a function (a
// JSON schema), a custom tool (a freeform grammar), or one the API
// defines, by its type alone (local_shell, web_search).
type responsesTool struct {
	Type        string                   `json:"type"`
	Name        string                   `json:"name,omitempty"`
	Description string                   `json:"description,omitempty"`
	Strict      *bool                    `json:"strict,omitempty"`
	Parameters  json.RawMessage          `json:"parameters,omitempty"`
	Format      *conversation.ToolFormat `json:"format,omitempty"`
}

// notStrict is the strict of every function tool: ralph's schemas are not
// written for strict mode (every property required, no extra ones).
var notStrict = new(bool)

// responsesTools is defs for the Responses API, as codex offers them.
func responsesTools(defs []conversation.ToolDef) any {
	tools := make([]responsesTool, len(defs))
	for i, d := range defs {
		switch {
		case d.Builtin != "":
			tools[i] = responsesTool{Type: d.Builtin}
		case d.Format != nil:
			tools[i] = responsesTool{Type: "custom", Name: d.Name, Description: d.Description, Format: d.Format}
		default:
			tools[i] = responsesTool{Type: "function", Name: d.Name, Description: d.Description, Strict: notStrict, Parameters: toolSchema(d)}
		}
	}
	return tools
}

// withResponsesSearch is a request's encoded tools with the API's own
// web_search last, after every tool of the set, which stays a prefix.
func withResponsesSearch(tools json.RawMessage) json.RawMessage {
	const search = `{"type":"web_search"}`
	rest := bytes.TrimSpace(tools)
	if len(rest) < 2 || string(rest) == "null" || string(rest) == "[]" {
		return json.RawMessage("[" + search + "]")
	}
	out := make([]byte, 0, len(rest)+len(search)+1)
	out = append(out, rest[:len(rest)-1]...)
	return append(append(append(out, ','), search...), ']')
}

// Kinds of call, by the tool they call.
const (
	callFunction   = ""
	callCustom     = "custom"
	callLocalShell = "local_shell"
)

// toolKinds are the freeform and local_shell tools of defs, by name.
func toolKinds(defs []conversation.ToolDef) map[string]string {
	var kinds map[string]string
	for _, d := range defs {
		kind := callFunction
		switch {
		case d.Builtin == callLocalShell:
			kind = callLocalShell
		case d.Format != nil:
			kind = callCustom
		default:
			continue
		}
		if kinds == nil {
			kinds = map[string]string{}
		}
		kinds[d.Name] = kind
	}
	return kinds
}

// body builds the request for req: {"model","instructions",
// "input":[…],"tools":[…],"tool_choice",…} (responsesHead, the items,
// the tools, responsesOptions).
func (w *responsesWire) body(c *Client, req Request) ([]byte, error) {
	head := responsesHead{Model: req.Model}
	var items []rItem
	head.Instructions, items = w.input(c, req)
	opts := responsesOptions{Stream: true, PromptCacheKey: req.CacheKey, MaxOutputTokens: max(c.cfg.MaxOutputTokens, 0)}
	var tools json.RawMessage
	if len(req.Tools) > 0 {
		var err error
		if tools, err = w.tools.encodedWith(req.Tools, responsesTools); err != nil {
			return nil, err
		}
	}
	if providers.Reasons(req.Model) {
		r := reasoningOption{Effort: providers.ReasoningEffort(req.Model), Summary: "auto"}
		if w.noSummary.Load() {
			r.Summary = ""
		}
		if r != (reasoningOption{}) {
			opts.Reasoning = &r
		}
		opts.Include = []string{"reasoning.encrypted_content"}
	}
	if c.webSearch(req) {
		// The search's sources, so that the line shown counts them.
		tools = withResponsesSearch(tools)
		opts.Include = append(opts.Include, "web_search_call.action.sources")
	}
	if len(tools) > 0 {
		opts.ToolChoice, opts.ParallelToolCalls = "auto", true
	}
	if req.Schema != nil {
		// The Responses API takes a schema beside tools, as codex exec
		// --output-schema sends it: on every request of the turn.
		sc := w.schema.sent(req.Schema)
		opts.Text = &responsesText{Format: responsesFormat{Type: "json_schema", Name: sc.Name, Schema: sc.Schema, Strict: sc.Strict}}
		if req.Answer && len(tools) > 0 {
			opts.ToolChoice, opts.ParallelToolCalls = "none", false
		}
	}

	var b bytes.Buffer
	b.Grow(bodySize(items) + len(tools) + len(head.Instructions) + 512)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// encode writes v without the newline the encoder ends it with.
	encode := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode the request: %w", err)
		}
		b.Truncate(b.Len() - 1)
		return nil
	}
	if err := encode(head); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1) // the head's closing brace
	b.WriteString(`,"input":[`)
	type plain rItem
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if it.raw != nil {
			b.Write(it.raw)
			continue
		}
		if err := encode(plain(it)); err != nil {
			return nil, err
		}
	}
	b.WriteByte(']')
	if len(tools) > 0 {
		b.WriteString(`,"tools":`)
		b.Write(tools)
	}
	at := b.Len()
	if err := encode(opts); err != nil {
		return nil, err
	}
	// The options' opening brace becomes the comma after the tools.
	b.Bytes()[at] = ','
	return b.Bytes(), nil
}

// bodySize is about how many bytes items take, so that the body is
// allocated once.
func bodySize(items []rItem) int {
	n := 0
	for _, it := range items {
		n += len(it.raw) + len(it.Action) + 64
		for _, p := range it.Content {
			n += len(p.Text) + len(p.ImageURL) + 32
		}
		for _, s := range []*string{it.Arguments, it.Input, it.Output} {
			if s != nil {
				n += len(*s) + len(*s)/8
			}
		}
	}
	return n
}

// input is the conversation as the instructions and the input
// items (see the top of this file).
func (w *responsesWire) input(c *Client, req Request) (string, []rItem) {
	var (
		instructions []string
		items        = []rItem{}
		kinds        = toolKinds(req.Tools)
		calls        = map[string]string{} // the kind of each call made so far, by call_id
		images       []rPart               // the images of the tool results since the last turn
		provider     = c.opaqueProvider()
	)
	flush := func() {
		if len(images) > 0 {
			items = append(items, rItem{Type: "message", Role: conversation.RoleUser, Content: images})
			images = nil
		}
	}
	for _, m := range sendable(shownImages(req.Messages, AcceptsImages(req.Model))) {
		if m.Role != conversation.RoleTool && m.Role != conversation.RoleUser {
			flush()
		}
		switch m.Role {
		case conversation.RoleSystem:
			if len(items) == 0 {
				if strings.TrimSpace(m.Content) != "" {
					instructions = append(instructions, m.Content)
				}
				continue
			}
			if parts := textParts("input_text", m.Content); len(parts) > 0 {
				items = append(items, rItem{Type: "message", Role: "developer", Content: parts})
			}
		case conversation.RoleAssistant:
			items = append(items, w.assistantItems(m, req.Model, provider, kinds, calls)...)
		case conversation.RoleTool:
			items = append(items, outputItem(m, calls))
			for _, img := range m.Images {
				images = append(images, rPart{Type: "input_text", Text: fmt.Sprintf("The image %s (from the %s call above):", img.Name, m.Name)},
					rPart{Type: "input_image", ImageURL: dataURL(img)})
			}
		default:
			parts := append(images, textParts("input_text", m.Content)...)
			for _, img := range m.Images {
				parts = append(parts, rPart{Type: "input_image", ImageURL: dataURL(img)})
			}
			images = nil
			if len(parts) > 0 {
				items = append(items, rItem{Type: "message", Role: conversation.RoleUser, Content: parts})
			}
		}
	}
	flush()
	return strings.Join(instructions, "\n\n"), items
}

// textParts is s as a message's one text part, or none when it is blank.
func textParts(typ, s string) []rPart {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []rPart{{Type: typ, Text: s}}
}

// assistantItems is an assistant turn as input items: its reasoning, its
// text and its calls, in the order reasoningBlock describes. calls learns
// the kind of each call, for its output.
func (w *responsesWire) assistantItems(m conversation.Message, model, provider string, kinds, calls map[string]string) []rItem {
	var lead []rItem
	var before map[string][]rItem
	for _, o := range m.Opaque {
		item, at, ok := w.reasoningItem(o, provider, model)
		if !ok {
			continue
		}
		if at != "" && hasCall(m.ToolCalls, at) {
			if before == nil {
				before = map[string][]rItem{}
			}
			before[at] = append(before[at], item)
			continue
		}
		lead = append(lead, item)
	}
	out := make([]rItem, 0, len(lead)+len(m.ToolCalls)+1)
	text := textParts("output_text", m.Content)
	if text != nil {
		out = append(append(out, lead...), rItem{Type: "message", Role: conversation.RoleAssistant, Content: text})
	}
	for _, tc := range m.ToolCalls {
		out = append(out, before[tc.ID]...)
		kind := kinds[tc.Name]
		calls[tc.ID] = kind
		out = append(out, callItem(tc, kind))
	}
	if text == nil {
		out = append(out, lead...)
	}
	return out
}

func hasCall(calls []conversation.ToolCall, id string) bool {
	for _, tc := range calls {
		if tc.ID == id {
			return true
		}
	}
	return false
}

// callItem is one call of the model as the input item of its kind.
func callItem(tc conversation.ToolCall, kind string) rItem {
	switch kind {
	case callCustom:
		input := customInput(tc.Arguments)
		return rItem{Type: "custom_tool_call", CallID: tc.ID, Name: tc.Name, Input: &input}
	case callLocalShell:
		action, _ := objectArguments(tc.Arguments)
		return rItem{Type: "local_shell_call", CallID: tc.ID, Status: "completed", Action: action}
	}
	args := tc.Arguments
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return rItem{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: &args}
}

// customInput is a freeform call's raw text: the "input" of its
// Arguments ({"input": "<text>"}), or the Arguments themselves when they
// are not that object.
func customInput(args string) string {
	var in struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &in) == nil && in.Input != nil {
		return *in.Input
	}
	return args
}

// customArguments is a freeform call's raw text as its Arguments, ralph's
// JSON {"input": "<text>"}, without HTML escapes.
func customArguments(input string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Input string `json:"input"`
	}{input}) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// outputItem is a tool result as the output of its call, or, when its
// call is not in the request, as the person's text naming it.
func outputItem(m conversation.Message, calls map[string]string) rItem {
	kind, ok := calls[m.ToolCallID]
	if !ok {
		note := fmt.Sprintf("(The result of the call %s of %s, whose call is no longer in this conversation:)\n%s", m.ToolCallID, m.Name, m.Content)
		return rItem{Type: "message", Role: conversation.RoleUser, Content: textParts("input_text", note)}
	}
	out := m.Content
	typ := "function_call_output"
	if kind == callCustom {
		typ = "custom_tool_call_output"
	}
	return rItem{Type: typ, CallID: m.ToolCallID, Output: &out}
}

// reasoningItem is the reasoning item an opaque block keeps, and the call
// it came before, when the block is this wire's, of provider and model,
// and not one the endpoint could not verify.
func (w *responsesWire) reasoningItem(o conversation.OpaqueBlock, provider, model string) (rItem, string, bool) {
	b, ok := reasoningOf(o, provider)
	if !ok || b.Model != model {
		return rItem{}, "", false
	}
	if w.anyDropped.Load() {
		if _, dropped := w.droppedReasoning.Load(blockKey(o.Block)); dropped {
			return rItem{}, "", false
		}
	}
	return rItem{raw: b.Reasoning}, b.Before, true
}

// reasoningOf reads a block of provider that is a reasoning block: not
// Anthropic's thinking, nor Gemini's signatures, which another wire keeps
// under a provider name that may be the same. A block is valid JSON (it
// was decoded from the record, or made by finish), and one in the form
// keep writes is read without decoding its reasoning, which is the most
// of it; any other is decoded.
func reasoningOf(o conversation.OpaqueBlock, provider string) (reasoningBlock, bool) {
	var b reasoningBlock
	if o.Provider != provider {
		return b, false
	}
	if b, ok := readReasoningBlock(o.Block); ok {
		return b, true
	}
	if !bytes.Contains(o.Block, []byte(`"reasoning"`)) || json.Unmarshal(o.Block, &b) != nil {
		return b, false
	}
	r := bytes.TrimSpace(b.Reasoning)
	return b, len(r) > 1 && r[0] == '{'
}

// readReasoningBlock reads a block written as keep writes it:
// {"before":"…","model":"…","reasoning":{…}}.
func readReasoningBlock(block []byte) (reasoningBlock, bool) {
	var b reasoningBlock
	rest, ok := bytes.CutPrefix(block, []byte(`{"before":`))
	if !ok {
		return b, false
	}
	if b.Before, rest, ok = jsonString(rest); !ok {
		return b, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"model":`)); !ok {
		return b, false
	}
	if b.Model, rest, ok = jsonString(rest); !ok {
		return b, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"reasoning":{`)); !ok || len(rest) < 2 || rest[len(rest)-1] != '}' || rest[len(rest)-2] != '}' {
		return b, false
	}
	b.Reasoning = block[len(block)-len(rest)-1 : len(block)-1]
	return b, true
}

// jsonString reads the JSON string at the start of p, and what follows it.
func jsonString(p []byte) (string, []byte, bool) {
	if len(p) == 0 || p[0] != '"' {
		return "", nil, false
	}
	escaped := false
	for i := 1; i < len(p); i++ {
		switch p[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return string(p[1:i]), p[i+1:], true
			}
			var s string
			if json.Unmarshal(p[:i+1], &s) != nil {
				return "", nil, false
			}
			return s, p[i+1:], true
		}
	}
	return "", nil, false
}

// blockKey names an opaque block within this process.
func blockKey(block []byte) uint64 { return maphash.Bytes(toolSeed, block) }
