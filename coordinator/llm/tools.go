package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"slices"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Every request carries the tool definitions, and they rarely change: the
// main agent's and every child's are the same few kilobytes of JSON
// schema, request after request. go-openai encodes them each time through
// a map and re-validates the result, which was nearly nine tenths of the
// cost of encoding a child's request (160 µs against 19 without them).
// So they are encoded once per set of definitions, kept, and spliced into
// the request body go-openai built without them (tap.RoundTrip).

// toolCache keeps the encoded "tools" array of the definitions seen last.
type toolCache struct {
	mu      sync.Mutex
	entries map[uint64]toolEntry
}

// toolSeed keys the cache; hashes are only compared within a process.
var toolSeed = maphash.MakeSeed()

type toolEntry struct {
	defs    []conversation.ToolDef
	encoded []byte
}

// maxToolSets bounds the cache: a process sees a handful of tool sets
// (the main agent's, the children's, the task loop's and a review's,
// with and without MCP tools), once for each tool family a session's
// models are offered (a fallback model or /model of another family adds
// its own): 5 roles × 2 MCP sets × 3 families fit.
const maxToolSets = 32

// encoded returns the JSON array for defs as the "tools" field of a chat
// completion request, with the same content go-openai would send.
func (tc *toolCache) encoded(defs []conversation.ToolDef) ([]byte, error) {
	return tc.encodedWith(defs, openAITools)
}

// encodedWith returns the JSON array encode makes of defs, encoded once
// per set of definitions. A cache serves one encoder: the Messages API's
// tools (messages_wire.go) have their own.
func (tc *toolCache) encodedWith(defs []conversation.ToolDef, encode func([]conversation.ToolDef) any) ([]byte, error) {
	key := hashDefs(defs)
	tc.mu.Lock()
	e, ok := tc.entries[key]
	tc.mu.Unlock()
	if ok && slices.EqualFunc(e.defs, defs, sameDef) {
		return e.encoded, nil
	}
	data, err := json.Marshal(encode(defs))
	if err != nil {
		return nil, fmt.Errorf("encode the tool definitions: %w", err)
	}
	e = toolEntry{defs: slices.Clone(defs), encoded: data}
	tc.mu.Lock()
	if tc.entries == nil || len(tc.entries) >= maxToolSets {
		tc.entries = map[uint64]toolEntry{}
	}
	tc.entries[key] = e
	tc.mu.Unlock()
	return data, nil
}

// openAITools is defs as the chat completions API takes them.
func openAITools(defs []conversation.ToolDef) any {
	tools := make([]wireTool, len(defs))
	for i, d := range defs {
		tools[i] = wireTool{Type: string(openai.ToolTypeFunction), Function: wireFunction{Name: d.Name, Description: d.Description, Parameters: toolSchema(d)}}
	}
	return tools
}

// toolSchema is a definition's parameters, or an object without any. A
// freeform or built-in tool (conversation.ToolDef's Format, Builtin),
// which only the Responses API has, is a function on the other wires:
// a freeform tool's text is its "input" argument, which is how its calls
// come back from every wire, and local_shell's action is its arguments.
func toolSchema(d conversation.ToolDef) json.RawMessage {
	switch {
	case d.Format != nil:
		return freeformSchema
	case d.Builtin == "local_shell":
		return localShellSchema
	case len(d.Parameters) == 0:
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return d.Parameters
}

// freeformSchema is a freeform tool's as a function's: its whole input,
// in the grammar its description names, as one string.
var freeformSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The whole input, as raw text in the tool's format (not JSON)."}},"required":["input"]}`)

// localShellSchema is the Responses API's local_shell action as a
// function's arguments.
var localShellSchema = json.RawMessage(`{"type":"object","properties":{"type":{"type":"string","enum":["exec"]},"command":{"type":"array","items":{"type":"string"},"description":"The command to execute, as its arguments"},"working_directory":{"type":"string"},"timeout_ms":{"type":"number"}},"required":["command"]}`)

// wireTool is a tool as the chat completions API takes it; the fields are
// go-openai's Tool and FunctionDefinition, as they encode.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func hashDefs(defs []conversation.ToolDef) uint64 {
	var h maphash.Hash
	h.SetSeed(toolSeed)
	for _, d := range defs {
		_, _ = h.WriteString(d.Name)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(d.Description)
		_ = h.WriteByte(0)
		_, _ = h.Write(d.Parameters)
		_ = h.WriteByte(0)
		if f := d.Format; f != nil {
			_, _ = h.WriteString(f.Type + "\x00" + f.Syntax + "\x00" + f.Definition)
		}
		_ = h.WriteByte(0)
		_, _ = h.WriteString(d.Builtin)
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}

func sameDef(a, b conversation.ToolDef) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters) &&
		a.Builtin == b.Builtin && (a.Format == nil) == (b.Format == nil) && (a.Format == nil || *a.Format == *b.Format)
}

// checkTools applies go-openai's own check of a request with tools, which
// it cannot make on a request built without them: some reasoning models
// take tools only through another API, and go-openai says so before
// anything is sent.
func checkTools(o openai.ChatCompletionRequest, defs []conversation.ToolDef) error {
	if len(defs) == 0 {
		return nil
	}
	o.Tools = []openai.Tool{{Type: openai.ToolTypeFunction}}
	return openai.NewReasoningValidator().Validate(o)
}

// rewriteBody returns a clone of req whose body is what edit makes of
// req's: the messages and tools (withMessagesAndTools), Gemini's thought
// signatures (withSignatures). The request itself is left as it was, as a
// RoundTripper must.
func rewriteBody(req *http.Request, edit func(body []byte) ([]byte, error)) (*http.Request, error) {
	if req.Body == nil {
		return nil, errors.New("the request to rewrite has no body")
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out, err := edit(body)
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.ContentLength = int64(len(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return r, nil
}
