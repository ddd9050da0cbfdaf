package workers

import _ "embed"

//go:embed list_files.md
var listFilesDescription string

// ListFilesParams are list_files's arguments.
type ListFilesParams struct {
	Path    string `json:"path" description:"Directory to list, relative to the project root. Default \".\"."`
	Pattern string `json:"pattern" description:"Optional glob matched against each entry's base name or relative path, e.g. \"*.go\" or \"cmd/**/*_test.go\"."`
}

func (t *Toolset) listFilesTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolListFiles, Description: description(listFilesDescription), Parameters: Schema(ListFilesParams{})},
		run: t.listFiles,
	}
}
