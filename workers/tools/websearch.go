package tools

import "strings"

// ToolWebSearch is the provider's own web search (coordinator/llm's
// websearch.go): no tool of this list, since ralph runs no search and
// the provider runs it inside a turn, offered only where the person
// switched it on (--web-search) and the provider has one. It has a name
// here so that what is written for Claude Code can name it: WebSearch
// in an agent definition's tools or a command's allowed-tools is this,
// and a list that names it keeps the search for the agent it narrows
// (coordinator.DefinitionSearches); where the session offers none, the
// agent goes without, said once when it starts.
const ToolWebSearch = "web_search"

// peerWebSearch is Claude Code's name of the provider's search.
const peerWebSearch = "WebSearch"

// webSearchName is ToolWebSearch when name is Claude Code's name of the
// search or ralph's, "" otherwise.
func webSearchName(name string) string {
	if strings.EqualFold(name, peerWebSearch) || strings.EqualFold(name, ToolWebSearch) {
		return ToolWebSearch
	}
	return ""
}
