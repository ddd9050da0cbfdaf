// Package conversation holds the types of a conversation with a model:
// messages, tool calls, tool definitions and token usage. They are ralph's
// own, in the shape the OpenAI chat API uses, and they are the on-disk form
// of a saved conversation; this leaf package lets memory persist them
// without depending on the HTTP client.
package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of a conversation, in the shape the OpenAI chat API
// uses; it is also the on-disk form of a saved conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// Refused is the endpoint's reason when it refused the request that
	// ended with this user message (HTTP 400, 413 or 422, a content
	// filter, a context-length error). Requests leave such a message out,
	// so one refusal does not make every later request fail the same way;
	// the transcript keeps it.
	Refused string `json:"refused,omitempty"`
	// Compacted makes this message the line messages.jsonl gets when the
	// conversation was compacted (CompactionMark): its Content is the
	// summary that replaces the conversation before it, save the system
	// prompt and the last Compacted.Kept messages.
	Compacted *Compaction `json:"compacted,omitempty"`
	// Opaque holds blocks of an assistant turn that only the provider that
	// wrote them can read, kept to be sent back to it unchanged: with
	// extended thinking and tool use, Anthropic refuses a request whose
	// assistant turn lost its thinking blocks and their signatures. A
	// request to another provider leaves them out.
	Opaque []OpaqueBlock `json:"opaque,omitempty"`
	// Images are the images a tool result (read_file of a picture) or a
	// person's message shows the model, by reference: messages.jsonl
	// keeps each image's name, type and content address, never its bytes,
	// which are a file of the session's own (Image.Ref).
	Images []Image `json:"images,omitempty"`
}

// Image is one image of a message. Ref is where its bytes are kept,
// relative to the session's directory ("images/<sha256>.png", ImageRef):
// the session writes them there when the message is recorded and reads
// them back into Data when the conversation is loaded, so a resumed
// session shows the model the same image. Data is never in the record.
type Image struct {
	// Name is the file it came from, as the model or person named it.
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Ref       string `json:"ref"`
	// Width and Height are the size the model is shown.
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Data   []byte `json:"-"`
}

// imageExt is the file extension of each media type an image may have.
var imageExt = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

// NewImage is the image of data with its content address: the same
// bytes always get the same Ref, so an image read twice is kept once.
func NewImage(name, mediaType string, data []byte, width, height int) Image {
	sum := sha256.Sum256(data)
	return Image{Name: name, MediaType: mediaType, Ref: "images/" + hex.EncodeToString(sum[:]) + imageExt[mediaType],
		Width: width, Height: height, Data: data}
}

// ValidImageRef reports whether ref is a content address NewImage makes
// (images/, 64 hex digits, a known extension) and nothing else: a record
// is read back from disk, and a ref must never name a file elsewhere.
func ValidImageRef(ref string) bool {
	name, ok := strings.CutPrefix(ref, "images/")
	if !ok || len(name) < 65 {
		return false
	}
	if _, err := hex.DecodeString(name[:64]); err != nil {
		return false
	}
	for _, ext := range imageExt {
		if name[64:] == ext {
			return true
		}
	}
	return false
}

// Matches reports whether data is the image Ref names (its content
// address), so a file changed on disk is never shown as the image.
func (i Image) Matches(data []byte) bool {
	sum := sha256.Sum256(data)
	return ValidImageRef(i.Ref) && strings.HasPrefix(i.Ref, "images/"+hex.EncodeToString(sum[:])+".")
}

// OpaqueBlock is one provider's block of an assistant turn, as it came.
type OpaqueBlock struct {
	// Provider is the provider that wrote it, as memory/providers names
	// it: "anthropic" for the Messages API's thinking blocks, "gemini" for
	// the thought signature of a Gemini tool call.
	Provider string `json:"provider"`
	// Block is the block's JSON exactly as the server sent it.
	Block json.RawMessage `json:"block"`
}

// Compaction says what a compaction did: a conversation summarised in
// place (chat's /compact, or ralph's own after a context-length refusal),
// on the mark line in messages.jsonl and on the conversation_compacted
// event.
type Compaction struct {
	// Kept is how many messages at the end of the conversation were kept
	// as they were, after the summary.
	Kept int `json:"kept"`
	// BeforeTokens and AfterTokens are the conversation's size before
	// and after, in tokens as ralph estimates them when it fits a request
	// to the window, the system prompt included.
	BeforeTokens int `json:"before_tokens"`
	AfterTokens  int `json:"after_tokens"`
	// Cause is why: "command" (the person's /compact) or "context_length"
	// (the endpoint refused a request as longer than its window).
	Cause string `json:"cause"`
	// Focus is what the person asked the summary to keep (/compact focus).
	Focus string `json:"focus,omitempty"`
}

// Causes of a compaction.
const (
	CompactedByCommand       = "command"
	CompactedForContextLimit = "context_length"
)

// SummaryAck is the assistant's short answer after a summary put into a
// conversation, so the conversation goes on with the person's next
// message and its roles still alternate (strict chat templates refuse two
// user messages in a row).
const SummaryAck = "Understood: I have the summary above and go on from it."

// CompactionMark is the line that replaces the conversation before it
// with summary, keeping its system messages and, after the summary, the
// last c.Kept messages. It is one line, so the append that writes it is
// whole or, torn by a crash, dropped on reading (LoadMessages): the
// conversation is compacted or it is not, never half.
func CompactionMark(summary string, c Compaction) Message {
	return Message{Role: RoleUser, Content: summary, Compacted: &c}
}

// Compact is what the conversation msgs is after a compaction mark m: its
// system messages, the summary and its acknowledgement, and the last
// m.Compacted.Kept messages.
func Compact(msgs []Message, m Message) []Message {
	kept := min(max(m.Compacted.Kept, 0), len(msgs))
	var out []Message
	for _, x := range msgs[:len(msgs)-kept] {
		if x.Role == RoleSystem {
			out = append(out, x)
		}
	}
	out = append(out, Message{Role: RoleUser, Content: m.Content}, Message{Role: RoleAssistant, Content: SummaryAck})
	return append(out, msgs[len(msgs)-kept:]...)
}

// ToolCall is one function call requested by the model. Arguments is the raw
// JSON text exactly as the model produced it, which may be invalid.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef describes a function the model may call.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Format, when set, makes the tool a freeform one: the model writes
	// its input as raw text in this grammar instead of JSON arguments
	// (the Responses API's custom tools, as codex offers apply_patch).
	// Its call's Arguments are {"input": <the text>}; a wire that has no
	// freeform tools offers it as a function taking that object.
	Format *ToolFormat `json:"format,omitempty"`
	// Builtin, when set, is a tool the API itself defines, offered by its
	// type alone ("local_shell", the Responses API's for
	// codex-mini-latest); Name is the name its calls get.
	Builtin string `json:"builtin,omitempty"`
}

// ToolFormat is a freeform tool's grammar: Type "grammar" with Syntax
// "lark" (or "regex") and the grammar's Definition.
type ToolFormat struct {
	Type       string `json:"type"`
	Syntax     string `json:"syntax,omitempty"`
	Definition string `json:"definition,omitempty"`
}

// Usage counts tokens as the endpoint reported them. Estimated marks
// counts in which ralph had to estimate what an endpoint did not report.
// ReasoningTokens is the part of OutputTokens a thinking model spent
// reasoning, where the endpoint says (completion_tokens_details).
//
// InputTokens is every token of the prompt, those read from or written to
// a prompt cache included: OpenAI's prompt_tokens counts its cached tokens,
// while Anthropic's input_tokens leaves out cache reads and writes, so the
// Messages client adds them back. Context fitting and budgets read
// InputTokens and would under-count a cached session tenfold otherwise.
// CacheReadTokens and CacheWriteTokens are the parts of InputTokens the
// server read from its prompt cache (Anthropic's cache_read_input_tokens,
// OpenAI's prompt_tokens_details.cached_tokens) and wrote to it
// (Anthropic's cache_creation_input_tokens); they are priced apart.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// WebSearches counts the searches the provider's own web_search tool
	// ran (Anthropic's usage.server_tool_use.web_search_requests): they
	// are billed per search, apart from tokens.
	WebSearches int  `json:"web_searches,omitempty"`
	Estimated   bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages; the sum is an estimate when either is.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens,
		CacheReadTokens: u.CacheReadTokens + o.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		WebSearches: u.WebSearches + o.WebSearches, Estimated: u.Estimated || o.Estimated}
}

// Sub returns what u counts beyond an earlier count o of the same tokens
// (a session's usage less what it had when a run began); it is an estimate
// when u is.
func (u Usage) Sub(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens - o.InputTokens, OutputTokens: u.OutputTokens - o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens - o.ReasoningTokens,
		CacheReadTokens: u.CacheReadTokens - o.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens - o.CacheWriteTokens,
		WebSearches: u.WebSearches - o.WebSearches, Estimated: u.Estimated}
}

// Empty reports an assistant message that says nothing: no text and no
// tool calls (a reasoning-only turn, a model that stopped at once, a tool
// call the server's parser dropped). The chat API requires content when
// there are no tool calls, and Ollama refuses such a message with HTTP 400
// "invalid message content type: <nil>" on every later request, so one
// must never be sent, and ralph does not keep one.
func (m Message) Empty() bool {
	return m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0
}

// IsRefusalMark reports whether m is the line messages.jsonl gets when a
// request was refused: no text of its own, it marks the user messages
// just before it as refused. The file is only ever appended to, so the
// mark comes after the message it is about.
func (m Message) IsRefusalMark() bool {
	return m.Role == RoleUser && m.Refused != "" && m.Content == "" && len(m.ToolCalls) == 0
}

// RefusalMark is the line that marks the messages before it as refused.
func RefusalMark(reason string) Message { return Message{Role: RoleUser, Refused: reason} }

// MarkRefused marks the user messages at the end of msgs, the turn the
// endpoint refused, with reason, and reports how many it marked. A
// conversation that ends in an answer or a tool result has no such turn:
// a refusal there is not of a person's message, and nothing is marked.
func MarkRefused(msgs []Message, reason string) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == RoleUser && msgs[i].Refused == ""; i-- {
		msgs[i].Refused = reason
		n++
	}
	return n
}

// ApplyMarks reads a saved conversation's mark lines, in order, as the
// saved conversation is read back: a refusal mark gives the messages
// before it their reason, a compaction mark replaces the conversation
// before it with its summary (Compact). The marks themselves are dropped.
func ApplyMarks(msgs []Message) []Message {
	if len(msgs) == 0 {
		return msgs[:0:0]
	}
	// Room for every message at once: a long conversation has no mark
	// to shorten it, and growing the copy step by step cost more than
	// the rest of reading it back.
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.Compacted != nil:
			out = Compact(out, m)
		case m.IsRefusalMark():
			MarkRefused(out, m.Refused)
		default:
			out = append(out, m)
		}
	}
	return out
}

// EstimateTokens approximates a message's token count without a
// tokenizer: about one token per 3.5 bytes of English and code, rounded up,
// plus a few tokens of per-message framing. It errs on the high side so a
// request fitted to a budget does not overflow the real window.
func EstimateTokens(m Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments) + 12
	}
	return EstimateBytes(n) + imageTokens(m.Images)
}

// imageTokens is what a message's images cost a request: Anthropic's
// documented width×height/750 tokens, which is above what OpenAI's tiles
// cost for the sizes ralph sends (at most 1568 px a side: about 3,300).
// An image of unknown size counts as the largest.
func imageTokens(imgs []Image) int {
	n := 0
	for _, img := range imgs {
		w, h := img.Width, img.Height
		if w <= 0 || h <= 0 {
			w, h = 1568, 1568
		}
		n += w*h/750 + 1
	}
	return n
}

// EstimateBytes is EstimateTokens for n bytes of prompt text in one framed
// part, for callers that can count bytes without building a message.
func EstimateBytes(n int) int {
	return (n*2+6)/7 + 6
}
