package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scenario is a scripted conversation: each chat completion request consumes
// the next Response in order, so a test can drive an agent through an exact
// sequence of model turns without a real model.
type Scenario struct {
	Name string `json:"name"`
	// Model, when set, makes requests for any other model fail with 404
	// model_not_found, which lets tests exercise model configuration errors.
	Model string `json:"model,omitempty"`
	// Served, when set, is the list GET /models answers with besides
	// Model (or the default model): a gateway's several models; ["-"]
	// answers an empty list, as gateways that list nothing do.
	Served []string `json:"served,omitempty"`
	// ModelsStatus, when set, answers GET /models with this HTTP status
	// and an error object: an endpoint whose list cannot be had.
	ModelsStatus int `json:"models_status,omitempty"`
	// APIKey, when set, makes requests without "Authorization: Bearer <key>"
	// fail with 401 invalid_api_key.
	APIKey string `json:"api_key,omitempty"`
	// Loop starts again at the first response after the last one, which suits
	// benchmarks that need an endless supply of turns.
	Loop bool `json:"loop,omitempty"`
	// Forget records requests without their bodies (Requests has no
	// Body or Request): a benchmark's scenario of tens of thousands of
	// turns would otherwise hold every prompt it was sent.
	Forget    bool       `json:"forget,omitempty"`
	Responses []Response `json:"responses"`

	// Flavor makes the server answer like a real one where they differ
	// (see flavor.go): "openai" (the default), "ollama", "lmstudio" or
	// "vllm". It decides the answers to paths outside the API (a base URL
	// without /v1) and the shape of the unknown-model and no-tools errors.
	Flavor string `json:"flavor,omitempty"`
	// NoTools refuses every request that offers tools, as a server does
	// for a model without tool support (the flavor's words and status).
	NoTools bool `json:"no_tools,omitempty"`
	// Refuse lists request fields the server's strict schema rejects with
	// HTTP 400 naming them: "stream_options", "tool_name" (the name of a
	// tool message).
	Refuse []string `json:"refuse,omitempty"`
	// Alternate refuses a conversation whose roles do not alternate (two
	// user messages in a row, two assistant messages without tool results
	// between them), as a strict chat template does (Gemma's, older
	// Mistral's): "Conversation roles must alternate
	// user/assistant/user/assistant/...", HTTP 400 in the vllm flavor
	// (vLLM), 500 otherwise (llama.cpp's server).
	Alternate bool `json:"alternate,omitempty"`
	// NumCtx is the context the ollama flavor serves the model with
	// (default 4096, Ollama's own default): /api/ps reports it once the
	// model is loaded (after the first chat request), and prompt_tokens
	// never exceeds it, since Ollama cuts a longer prompt silently.
	NumCtx int `json:"num_ctx,omitempty"`
	// NumCtxModelfile says the model's Modelfile sets NumCtx (PARAMETER
	// num_ctx): /api/show lists it among the parameters, and it is served
	// whether the model is loaded or not. Otherwise NumCtx is the server's
	// default (OLLAMA_CONTEXT_LENGTH).
	NumCtxModelfile bool `json:"num_ctx_modelfile,omitempty"`
	// APIHang makes the ollama flavor's native API (/api/ps, /api/show)
	// accept a request and answer nothing until the client goes away, as
	// an Ollama busy loading a model on a slow machine can.
	APIHang bool `json:"api_hang,omitempty"`
	// PromptCache simulates the prompt cache OpenAI keeps without being
	// asked, in the Responses API (responses_cache.go): a request that
	// repeats an earlier one's prefix reads it from the cache, reported
	// as usage.input_tokens_details.cached_tokens. It is off by default,
	// because it changes the usage, and so the cost, of every
	// conversation a test has with a Responses client (the real API's
	// would: codex's second request reads about half its prompt from it).
	PromptCache bool `json:"prompt_cache,omitempty"`
	// CacheMinTokens is the smallest prefix, in estimated tokens, that the
	// prompt caches keep: the Messages API's at a cache_control
	// breakpoint (the real API's minimum is 1,024 for Sonnet and Opus; a
	// breakpoint before it is ignored silently), the Responses API's at
	// any item (OpenAI caches prompts of 1,024 tokens and more). The
	// default 0 caches every prefix, so short test conversations show
	// cache reads.
	CacheMinTokens int `json:"cache_min_tokens,omitempty"`
	// Translates makes the server translate every model onto chat
	// completions, as a router does (OpenRouter serves
	// "openai/gpt-5-codex" there): without it, the openai flavor (the
	// default) refuses a chat completions request for a model OpenAI
	// serves only on the Responses API (providers.ResponsesOnly: every
	// codex model, o1-pro, o3-pro) with OpenAI's HTTP 404 "This model is
	// only supported in v1/responses and not in v1/chat/completions.",
	// and consumes no response for it.
	Translates bool `json:"translates,omitempty"`
	// ContextWindow, when set, refuses a Messages API request whose
	// prompt (estimated as usage estimates it) is longer, with the real
	// API's HTTP 400 "prompt is too long: N tokens > M maximum", and
	// consumes no response for it.
	ContextWindow int `json:"context_window,omitempty"`

	// dir is the directory of the scenario file, against which a
	// relative Replay path is read; "" for a scenario built in code.
	dir string
}

// Response is one scripted model turn. It is either an HTTP error (Status set
// and not 200), a raw event stream (Raw), or a generated answer made of Text
// followed by ToolCalls.
type Response struct {
	// Status, when set and not 200, makes the reply an HTTP error with that
	// status, Headers and Body (default body:
	// {"error":{"message":"fake error <status>","type":"server_error"}}).
	// Headers are also sent with successful replies.
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// EmptyBody sends the error with no body at all, like a load
	// balancer's bare 502.
	EmptyBody bool `json:"empty_body,omitempty"`
	// RateLimit answers 429 as a real server does when a rate or usage
	// limit is hit (see ratelimit.go).
	RateLimit *RateLimit `json:"rate_limit,omitempty"`

	// Text is the assistant content, streamed in chunks of ChunkSize runes
	// (default 8). TextChunks gives the chunks explicitly and wins over Text.
	Text       string   `json:"text,omitempty"`
	TextChunks []string `json:"text_chunks,omitempty"`
	ChunkSize  int      `json:"chunk_size,omitempty"`
	// ToolCalls are streamed after the text.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// InterleaveToolCalls streams the tool-call fragments round-robin across
	// calls (every call's header first, then the first argument fragment of
	// each call, and so on) instead of one call after the other. Real servers
	// rarely do this, but a client that reassembles by index must cope.
	InterleaveToolCalls bool `json:"interleave_tool_calls,omitempty"`
	// Usage overrides the reported token counts. By default prompt tokens
	// are the request body length / 4 and completion tokens the output
	// length / 4, which is close enough for budget and cost code paths.
	Usage *Usage `json:"usage,omitempty"`
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise. The Responses API ends a response whose finish
	// reason is "length" or "content_filter" with response.incomplete,
	// its incomplete_details.reason max_output_tokens or content_filter.
	FinishReason string `json:"finish_reason,omitempty"`
	// Failure ends the stream, after the text and the tool calls, as a
	// server ends one that failed once its 200 was out: in the Responses
	// API an error event and response.failed, both with the code and
	// the message (testdata/openai-responses/error_failed.sse); in chat
	// completions a data line {"error":{…}}; in the Messages API an
	// error event of the matching type. A scripted StreamError wins.
	Failure *Failure `json:"failure,omitempty"`

	// DelayMS waits before the response headers; ChunkDelayMS waits before
	// every streamed event. Both return at once when the client goes away.
	DelayMS      int `json:"delay_ms,omitempty"`
	ChunkDelayMS int `json:"chunk_delay_ms,omitempty"`
	// Hold, when set, is called before each streamed event, after
	// ChunkDelayMS, and may block: a Go test pauses the stream with it
	// (a response of NewServerFunc; a scenario file cannot set it).
	Hold func() `json:"-"`
	// Truncate stops mid-stream: the content and tool-call chunks are sent,
	// but no finish_reason, no usage and no [DONE]; then the response ends.
	// For a non-streaming request only the first half of the JSON is sent.
	Truncate bool `json:"truncate,omitempty"`
	// Raw payloads are sent verbatim, each as "data: <raw>\n\n", instead of
	// generated chunks, followed by [DONE] unless Truncate. A non-streaming
	// request gets the payloads concatenated as its body.
	Raw []string `json:"raw,omitempty"`
	// StreamError is sent as one "data: <StreamError>" event after the
	// text, and then the stream ends: how OpenAI, Ollama, vLLM and
	// OpenRouter report a failure once the 200 headers are out (for
	// example {"error":{"message":…,"code":…}} or {"error":"…"}).
	StreamError string `json:"stream_error,omitempty"`
	// Stall sends the headers and the text, then nothing at all until the
	// client goes away: a server that accepted the request and hung.
	Stall bool `json:"stall,omitempty"`
	// NoUsage leaves the usage chunk out even when the client asks for it,
	// as servers that ignore stream_options do.
	NoUsage bool `json:"no_usage,omitempty"`
	// Reasoning is a thinking model's reasoning, streamed before the text
	// as "reasoning" in the ollama flavor (Ollama, OpenRouter) and
	// "reasoning_content" otherwise (DeepSeek, vLLM, llama.cpp's server),
	// and counted in usage as completion_tokens_details.reasoning_tokens.
	// The Messages API sends it as a thinking block, the Responses API
	// as a reasoning item's summary (see responses.go).
	Reasoning string `json:"reasoning,omitempty"`
	// RedactedThinking, in the Messages API, adds a redacted_thinking
	// block whose opaque data hides this text, after the thinking.
	RedactedThinking string `json:"redacted_thinking,omitempty"`
	// Message is the message of a scripted error (Status) in the API's
	// own error shape: Anthropic's {"type":"error","error":{"type":…,
	// "message":…}} with the type of the status, or OpenAI's
	// {"error":{"message":…}}. Body, when set, wins.
	Message string `json:"message,omitempty"`
	// Replay sends a recorded response body as it is, byte for byte: an
	// event stream (a file ending in .sse, its events sent one by one with
	// ChunkDelayMS before each, the first half only when Truncate) or a
	// JSON body (any other file), with Status (default 200) and Headers.
	// A relative path is read from the scenario file's directory (the
	// working directory for a scenario built in code). See
	// testdata/anthropic for real Messages API recordings and
	// testdata/openai-responses for real Responses API streams.
	Replay string `json:"replay,omitempty"`
	// WebSearch, in the Messages API, is a search its own web_search tool
	// runs before the text, when the request offers the tool (websearch.go).
	WebSearch *WebSearch `json:"web_search,omitempty"`
}

// ToolCall is one function call the fake model asks the client to run.
type ToolCall struct {
	// ID defaults to "call_<n>", with n counting tool calls across the
	// server's lifetime so that ids stay unique over a whole conversation.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Type is what kind of call it is in the Responses API: "" (or
	// "function") a function_call; "custom" a custom_tool_call of a
	// freeform tool, whose Arguments are its raw input text (not JSON);
	// "local_shell" a local_shell_call, whose Arguments are its action
	// object ({"type":"exec","command":[…],…}). The other APIs have
	// neither and get a function call of the same name: a custom call's
	// arguments as {"input":"<the text>"}, a local shell's as its action
	// (named "local_shell" when Name is empty).
	Type string `json:"type,omitempty"`
	// Arguments is raw JSON text; it may be deliberately invalid in a test.
	Arguments string `json:"arguments"`
	// ArgChunks gives the streamed argument fragments explicitly; by default
	// Arguments is split into about three pieces.
	ArgChunks []string `json:"arg_chunks,omitempty"`
}

// Failure is how a stream that failed after its 200 ends (Response.Failure).
type Failure struct {
	// Code and Message say why, as the real API words them: for example
	// "rate_limit_exceeded", "server_error" or "insufficient_quota".
	Code    string `json:"code"`
	Message string `json:"message"`
	// Only, in the Responses API, sends just one of the two events the
	// real API sends: "error" (the stream then ends without a terminal
	// response event) or "failed" (response.failed alone).
	Only string `json:"only,omitempty"`
}

// Tool call types (ToolCall.Type).
const (
	callFunction   = "function"
	callCustom     = "custom"
	callLocalShell = "local_shell"
)

// Usage is the token accounting reported for a response.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CacheReadTokens and CacheWriteTokens are the cached parts of
	// PromptTokens, which is the whole prompt: the Messages API reports
	// them as cache_read_input_tokens and cache_creation_input_tokens
	// (and input_tokens as the rest), chat completions CacheReadTokens as
	// prompt_tokens_details.cached_tokens, the Responses API as
	// input_tokens_details.cached_tokens. Set, they replace the simulated
	// prompt caches' counts for this response.
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// fullArguments is the complete argument text, whichever way it was given.
func (tc ToolCall) fullArguments() string {
	if len(tc.ArgChunks) > 0 {
		return strings.Join(tc.ArgChunks, "")
	}
	return tc.Arguments
}

// asFunction is the call as a function call, for the APIs that have no
// custom or local shell calls: a custom call's input wrapped as
// {"input":…}, a local shell call's action as its arguments.
func (tc ToolCall) asFunction() ToolCall {
	switch tc.Type {
	case callCustom:
		b, _ := json.Marshal(map[string]string{"input": tc.fullArguments()})
		tc.Arguments, tc.ArgChunks = string(b), nil
	case callLocalShell:
		if tc.Name == "" {
			tc.Name = "local_shell"
		}
	}
	tc.Type = ""
	return tc
}

// LoadScenario reads a scenario JSON file. Errors name the file so that a
// broken fixture is easy to find from a failing test.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fake model scenario: %w", err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		return nil, fmt.Errorf("fake model scenario %s: %w", path, err)
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	sc.dir = filepath.Dir(path)
	for i, r := range sc.Responses {
		if r.Replay == "" {
			continue
		}
		if _, err := os.Stat(sc.replayPath(r.Replay)); err != nil {
			return nil, fmt.Errorf("fake model scenario %s: response %d: %w", path, i+1, err)
		}
	}
	return sc, nil
}

// ParseScenario decodes and validates a scenario. Unknown fields are
// rejected because a misspelt option (say "chunk_delay") would otherwise
// silently change what a test exercises.
func ParseScenario(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("bad JSON: trailing data after the scenario object")
	}
	if err := sc.validate(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// validate reports scripting mistakes that would otherwise surface as
// confusing client-side failures.
func (sc *Scenario) validate() error {
	if len(sc.Responses) == 0 {
		return errors.New("scenario has no responses")
	}
	if _, ok := flavors[sc.Flavor]; !ok {
		return fmt.Errorf("unknown flavor %q (known: openai, ollama, lmstudio, vllm)", sc.Flavor)
	}
	for _, f := range sc.Refuse {
		if f != refuseStreamOptions && f != refuseToolName {
			return fmt.Errorf("unknown field to refuse %q (known: %s, %s)", f, refuseStreamOptions, refuseToolName)
		}
	}
	if sc.NumCtx < 0 {
		return fmt.Errorf("num_ctx must not be negative, not %d", sc.NumCtx)
	}
	for i, r := range sc.Responses {
		if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
			return fmt.Errorf("response %d: invalid status %d", i+1, r.Status)
		}
		if r.Replay != "" && (len(r.Raw) > 0 || r.Text != "" || len(r.TextChunks) > 0 || len(r.ToolCalls) > 0 || r.RateLimit != nil) {
			return fmt.Errorf("response %d: replay sends a recorded body and takes no text, tool_calls, raw or rate_limit", i+1)
		}
		if r.ChunkSize < 0 || r.DelayMS < 0 || r.ChunkDelayMS < 0 {
			return fmt.Errorf("response %d: chunk_size, delay_ms and chunk_delay_ms must not be negative", i+1)
		}
		for j, tc := range r.ToolCalls {
			if len(tc.ArgChunks) > 0 && tc.Arguments != "" && tc.fullArguments() != tc.Arguments {
				return fmt.Errorf("response %d, tool call %d: arg_chunks do not join up to arguments", i+1, j+1)
			}
			switch tc.Type {
			case "", callFunction, callCustom:
			case callLocalShell:
				var action map[string]any
				if json.Unmarshal([]byte(tc.fullArguments()), &action) != nil {
					return fmt.Errorf("response %d, tool call %d: a local_shell call's arguments are its action, a JSON object", i+1, j+1)
				}
			default:
				return fmt.Errorf("response %d, tool call %d: unknown type %q (known: function, custom, local_shell)", i+1, j+1, tc.Type)
			}
		}
		if f := r.Failure; f != nil && f.Only != "" && f.Only != "error" && f.Only != "failed" {
			return fmt.Errorf("response %d: failure.only is \"error\" or \"failed\", not %q", i+1, f.Only)
		}
	}
	return nil
}
