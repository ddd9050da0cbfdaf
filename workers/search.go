package workers

import _ "embed"

//go:embed search.md
var searchDescription string

// SearchParams are search's arguments.
type SearchParams struct {
	Pattern string `json:"pattern" required:"true" description:"Go regular expression, e.g. \"func \\\\w+Handler\" or \"(?i)todo\"."`
	Path    string `json:"path" description:"File or directory to search, relative to the project root. Default \".\"."`
}

func (t *Toolset) searchTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolSearch, Description: description(searchDescription), Parameters: Schema(SearchParams{})},
		run: t.search,
	}
}
