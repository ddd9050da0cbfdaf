package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ralph-dev/ralph/memory/providers"
)

// web_search is the providers' own search, never ralph's: ralph has no
// search engine, so the tool is offered only where the provider runs it
// (docs/tools.md#web_search), and only when the person switched it on.
//
//   - Anthropic's Messages API: the server tool
//     {"type":"web_search_20250305","name":"web_search","max_uses":N} in
//     tools. The answer streams a server_tool_use block (its input, the
//     query, as input_json_delta), a web_search_tool_result block (the
//     results, or an error object), and text blocks with citations
//     (citations_delta). The API ran the search: ralph never runs a
//     server_tool_use, and it drops both blocks, and the citations, from
//     the turn it keeps (see messagesTurn.finish), so the next request
//     carries the turn's text only, which the API takes.
//   - OpenAI's chat completions: web_search_options {} in the request,
//     which only its search models take (gpt-4o-search-preview,
//     gpt-4o-mini-search-preview, gpt-5-search-api); the answer's text
//     carries annotations of type url_citation. No other OpenAI model
//     searches through chat completions.
//   - OpenAI's Responses API: the tool {"type":"web_search"}, which the
//     GPT-5 family and the o-series take; each search the API ran comes
//     as a web_search_call output item (its action's query), shown and
//     never given back (responses_stream.go).

// WebSearchMaxUses is the most searches one request may make (the server
// tool's max_uses): each one costs, so a turn is bounded.
const WebSearchMaxUses = 5

// WebSearchPrice is what one search costs in US dollars, added to a
// usage's cost, as the provider table has it.
const WebSearchPrice = providers.WebSearchPrice

// ErrNoWebSearch marks a model whose provider offers no search of its own.
var ErrNoWebSearch = errors.New("web_search is not offered")

// WebSearchFor reports whether model, spoken to in protocol (as the
// provider table names it; "" is OpenAI's chat completions), has its
// provider's own web search; its error is the one sentence that says why
// not. The protocol's wire answers (protocols.go).
func WebSearchFor(protocol, model string) error {
	return wireFor(protocol).webSearch(model)
}

// WebSearchWith is WebSearchFor for a client made of cfg: for OpenAI's
// protocol the API that serves model at cfg's endpoint answers (the
// Responses API's search serves other models than chat completions').
func WebSearchWith(cfg Config, model string) error {
	c := &Client{cfg: cfg, wire: wireFor(cfg.Protocol)}
	if c.cfg.BaseURL == "" {
		c.cfg.BaseURL = c.wire.home().BaseURL
	}
	return c.wireOf(model).webSearch(model)
}

// openAIWebSearch is WebSearchFor on chat completions: only OpenAI's
// search models search there.
func openAIWebSearch(model string) error {
	if providers.SearchModel(model) {
		return nil
	}
	return fmt.Errorf("%w to %s: only Anthropic's Messages API and OpenAI's search models (gpt-4o-search-preview, gpt-4o-mini-search-preview, gpt-5-search-api) search the web themselves, and ralph has no search engine of its own", ErrNoWebSearch, model)
}

// webSearch reports whether req carries the provider's search tool: the
// client offers it, req's model has it, and req does not leave it out.
func (c *Client) webSearch(req Request) bool {
	return c.cfg.WebSearch && !req.NoWebSearch && c.wireOf(req.Model).webSearch(req.Model) == nil
}

// SearchInfo is one search the provider ran, as the faces show it.
type SearchInfo struct {
	// Query is what was searched for (the model's words: untrusted).
	Query string `json:"query,omitempty"`
	// Results is how many results came back; Error the provider's error
	// code (max_uses_exceeded, too_many_requests, …) when it failed.
	Results int    `json:"results"`
	Error   string `json:"error,omitempty"`
}

// anthropicSearchTool is the Messages API's server tool.
type anthropicSearchTool struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	MaxUses int    `json:"max_uses"`
}

// withSearchTool is a Messages request's encoded tools with the server
// tool first, so that the last function tool keeps its cache breakpoint.
func withSearchTool(tools json.RawMessage) (json.RawMessage, error) {
	st, err := json.Marshal(anthropicSearchTool{Type: "web_search_20250305", Name: "web_search", MaxUses: WebSearchMaxUses})
	if err != nil {
		return nil, fmt.Errorf("encode the web_search tool: %w", err)
	}
	rest := bytes.TrimSpace(tools)
	if len(rest) < 2 || string(rest) == "null" || string(rest) == "[]" {
		return append(append([]byte{'['}, st...), ']'), nil
	}
	out := make([]byte, 0, len(rest)+len(st)+2)
	out = append(append(append(out, '['), st...), ',')
	return append(out, rest[1:]...), nil
}

// withSearchOptions returns req with web_search_options {} added to its
// JSON body, which go-openai's request has no field for. The request
// itself is left as it was, as a RoundTripper must.
func withSearchOptions(req *http.Request) (*http.Request, error) {
	return rewriteBody(req, func(body []byte) ([]byte, error) {
		end := bytes.LastIndexByte(body, '}')
		if end < 0 {
			return nil, errors.New("the request body is not a JSON object")
		}
		out := make([]byte, 0, len(body)+30)
		out = append(out, body[:end]...)
		if head := bytes.TrimSpace(out); len(head) > 0 && head[len(head)-1] != '{' {
			out = append(out, ',')
		}
		out = append(out, `"web_search_options":{}`...)
		return append(out, body[end:]...), nil
	})
}

// searchResult reads a web_search_tool_result block's content: a list of
// results, or an error object ({"type":"web_search_tool_result_error",
// "error_code":…}).
func searchResult(content json.RawMessage) (results int, code string) {
	var list []json.RawMessage
	if json.Unmarshal(content, &list) == nil {
		return len(list), ""
	}
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	if json.Unmarshal(content, &e) == nil && e.ErrorCode != "" {
		return 0, e.ErrorCode
	}
	return 0, "unreadable result"
}

// searchQuery is a server_tool_use block's query, from its streamed input.
func searchQuery(input string) string {
	var in struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal([]byte(input), &in)
	return in.Query
}

// chunkAnnotation is an annotation of a search model's streamed text.
type chunkAnnotation struct {
	Type string `json:"type"`
}

// urlCitations counts the url_citation annotations of a chunk.
func urlCitations(as []chunkAnnotation) int {
	n := 0
	for _, a := range as {
		if a.Type == "url_citation" {
			n++
		}
	}
	return n
}
