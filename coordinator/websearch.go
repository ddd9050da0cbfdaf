package coordinator

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The provider's web_search (coordinator/llm/websearch.go) is the
// session's, offered where the person switched it on and the provider
// has one; an agent definition written for Claude Code decides only
// whether its agent keeps it. A definition without a tools list keeps
// what its parent has; one with a list keeps it when the list names
// WebSearch (tools.ToolWebSearch), as Claude Code's does. Where the
// session offers no search, a definition that names it goes without,
// said in one sentence when the agent starts, once a definition, and
// never at every start of ralph.

// DefinitionSearches reports whether an agent following def keeps the
// session's web_search.
func DefinitionSearches(def agentdefs.Def) bool {
	return def.Tools == nil || slices.Contains(def.Tools, tools.ToolWebSearch)
}

// NamesSearch reports whether def's tools name WebSearch.
func NamesSearch(def agentdefs.Def) bool {
	return slices.Contains(def.Tools, tools.ToolWebSearch)
}

// NoSearchNote is the sentence that says agent def names WebSearch and
// goes without it, since the session offers none (why, off: the
// session's WebSearchOff); "" when it does not name it or the session
// offers the search.
func NoSearchNote(def agentdefs.Def, off string) string {
	if off == "" || !NamesSearch(def) {
		return ""
	}
	return fmt.Sprintf("agent %s (%s) names WebSearch, which it goes without: %s", text.Visible(def.Name), text.Visible(def.Shown), off)
}

// saidNoSearch are the definitions whose missing search was said, once
// a process.
var saidNoSearch sync.Map

// sayNoSearch warns, once a definition, that an agent following def
// goes without the WebSearch it names.
func (c *Coordinator) sayNoSearch(def agentdefs.Def) {
	note := NoSearchNote(def, c.opts.WebSearchOff)
	if note == "" {
		return
	}
	if _, said := saidNoSearch.LoadOrStore(def.Shown, true); !said {
		c.emit(event.Event{Type: event.Warning, Turn: c.turns, Text: note})
	}
}

// searches reports whether this agent's next request may carry the
// provider's web_search: its definition keeps it, and a narrowed run (a
// command's allowed-tools) names it.
func (c *Coordinator) searches() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opts.NoWebSearch {
		return false
	}
	return c.narrowed == nil || c.narrowedSearch
}
