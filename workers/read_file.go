package workers

import _ "embed"

//go:embed read_file.md
var readFileDescription string

// ReadFileParams are read_file's arguments.
type ReadFileParams struct {
	Path   string `json:"path" required:"true" description:"File path, relative to the project root."`
	Offset int    `json:"offset" description:"First line to return, 1-based. Default 1."`
	Limit  int    `json:"limit" description:"Number of lines to return. Default: as many as fit."`
}

func (t *Toolset) readFileTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolReadFile, Description: description(readFileDescription), Parameters: Schema(ReadFileParams{})},
		run: t.readFile,
	}
}
