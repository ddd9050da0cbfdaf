package workers

import _ "embed"

//go:embed write_file.md
var writeFileDescription string

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" required:"true" description:"File path, relative to the project root."`
	Content string `json:"content" required:"true" description:"The complete new content of the file."`
}

func (t *Toolset) writeFileTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolWriteFile, Description: description(writeFileDescription), Parameters: Schema(WriteFileParams{})},
		run: t.writeFile,
	}
}
