package workers

import _ "embed"

//go:embed edit_file.md
var editFileDescription string

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path      string `json:"path" required:"true" description:"File path, relative to the project root."`
	OldString string `json:"old_string" required:"true" description:"Exact text to replace; must occur exactly once in the file."`
	NewString string `json:"new_string" required:"true" description:"Text to put in its place."`
}

func (t *Toolset) editFileTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolEditFile, Description: description(editFileDescription), Parameters: Schema(EditFileParams{})},
		run: t.editFile,
	}
}
