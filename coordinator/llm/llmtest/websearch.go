package llmtest

import (
	"encoding/json"
	"fmt"
)

// WebSearch scripts a search the Messages API's own web_search tool runs
// inside a turn, as the real API streams it: a server_tool_use block whose
// input (the query) comes as input_json_delta, a web_search_tool_result
// block with the results whole at its start (or an error object), and the
// response's Text as a text block citing the first result
// (citations_delta), with usage.server_tool_use.web_search_requests. It
// is sent only when the request offered the tool
// ({"type":"web_search_20250305","name":"web_search"}), as the real model
// searches only then; otherwise the response is its text alone.
// ralph's testdata/anthropic_web_search_stream.sse (coordinator/llm) is
// the shape, after Anthropic's documentation and a recorded stream.
type WebSearch struct {
	Query   string         `json:"query"`
	Results []SearchResult `json:"results,omitempty"`
	// Error, when set, is the result's error_code (max_uses_exceeded,
	// too_many_requests, …) in place of results.
	Error string `json:"error,omitempty"`
}

// SearchResult is one result of a scripted search.
type SearchResult struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// searchToolType is the server tool's type the stand-in knows.
const searchToolType = "web_search_20250305"

// offersSearch reports whether the request offered the server tool.
func (r *messagesRequest) offersSearch() bool {
	if r == nil {
		return false
	}
	for _, t := range r.Tools {
		var tool struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t, &tool) == nil && tool.Type == searchToolType {
			return true
		}
	}
	return false
}

// checkServerTools refuses a server tool the API would: one of a type it
// does not know, or web_search under another name.
func (r *messagesRequest) checkServerTools() string {
	for i, t := range r.Tools {
		var tool struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			MaxUses *int   `json:"max_uses"`
		}
		if json.Unmarshal(t, &tool) != nil || tool.Type == "" || tool.Type == "custom" {
			continue
		}
		if tool.Type != searchToolType {
			return fmt.Sprintf("tools.%d: Input tag '%s' found using 'type' does not match any of the expected tags", i, tool.Type)
		}
		if tool.Name != "web_search" {
			return fmt.Sprintf("tools.%d.name: Input should be 'web_search'", i)
		}
		if tool.MaxUses != nil && *tool.MaxUses < 1 {
			return fmt.Sprintf("tools.%d.max_uses: Input should be greater than 0", i)
		}
	}
	return ""
}

// checkSearchPairs refuses an assistant turn sent back with a
// server_tool_use whose web_search_tool_result is not after it in the
// same turn, or a result without its call, as the real API does.
func checkSearchPairs(msgs []messagesMessage, blocks [][]contentBlock) string {
	for i := range msgs {
		called := map[string]bool{}
		for j, b := range blocks[i] {
			switch b.Type {
			case "server_tool_use":
				called[b.ID] = true
			case "web_search_tool_result":
				if !called[b.ToolUseID] {
					return fmt.Sprintf("messages.%d.content.%d: web_search_tool_result block(s) provided without a corresponding server_tool_use block with id %s", i, j, b.ToolUseID)
				}
				delete(called, b.ToolUseID)
			}
		}
		for id := range called {
			return fmt.Sprintf("messages.%d: server_tool_use ids were found without web_search_tool_result blocks immediately after: %s", i, id)
		}
	}
	return ""
}

// blocks are a scripted search's two blocks: the server_tool_use of id
// with its input deltas, and the web_search_tool_result whole.
func (ws *WebSearch) blocks(id string) (call anthropicBlock, callDeltas []map[string]any, result map[string]any) {
	input, _ := json.Marshal(map[string]string{"query": ws.Query})
	half := len(input) / 2
	callDeltas = []map[string]any{
		{"type": "input_json_delta", "partial_json": ""},
		{"type": "input_json_delta", "partial_json": string(input[:half])},
		{"type": "input_json_delta", "partial_json": string(input[half:])},
	}
	call = anthropicBlock{Type: "server_tool_use", ID: id, Name: "web_search", Input: json.RawMessage("{}")}
	var content any
	if ws.Error != "" {
		content = map[string]string{"type": "web_search_tool_result_error", "error_code": ws.Error}
	} else {
		list := []map[string]any{}
		for i, r := range ws.Results {
			list = append(list, map[string]any{"type": "web_search_result", "title": r.Title, "url": r.URL,
				"encrypted_content": fmt.Sprintf("EpQDCioIstand-in-result-%d", i), "page_age": nil})
		}
		content = list
	}
	result = map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": content}
	return call, callDeltas, result
}

// citation is the citations_delta of a text that cites the search's
// first result, or nil when it has none.
func (ws *WebSearch) citation(text string) map[string]any {
	if ws.Error != "" || len(ws.Results) == 0 {
		return nil
	}
	cited := text
	if len([]rune(cited)) > 150 {
		cited = string([]rune(cited)[:150])
	}
	r := ws.Results[0]
	return map[string]any{"type": "citations_delta", "citation": map[string]any{"type": "web_search_result_location",
		"cited_text": cited, "url": r.URL, "title": r.Title, "encrypted_index": "Eo8BCioIstand-in-index"}}
}
