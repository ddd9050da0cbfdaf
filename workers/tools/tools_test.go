package tools

import (
	"slices"
	"testing"
)

// TestToolInfo keeps the metadata true to the tools: a tool that writes
// only its path requires a path, and what checkpoints skip as read-only
// are the tools that change nothing in the work tree.
func TestToolInfo(t *testing.T) {
	params := map[string]any{ToolWriteFile: WriteFileParams{}, ToolEditFile: EditFileParams{}}
	for name, p := range params {
		if !Info(name).WritesPaths || Info(name).ReadOnly {
			t.Errorf("%s: %+v, want WritesPaths", name, Info(name))
		}
		if !slices.Contains(Required(p), "path") {
			t.Errorf("%s writes its path but does not require one", name)
		}
	}
	for _, name := range []string{ToolReadFile, ToolListFiles, ToolSearch, ToolRecordDecision, ToolAskUser} {
		if !Info(name).ReadOnly {
			t.Errorf("%s is not read-only", name)
		}
	}
	for _, name := range []string{ToolSpawnAgent, "mcp__x__y"} {
		if Info(name) != (ToolInfo{}) {
			t.Errorf("%s: %+v, want nothing known", name, Info(name))
		}
	}
	// run_command may do anything, and may ask first; what it writes,
	// its sandboxed commands write.
	if Info(ToolRunCommand) != (ToolInfo{Asks: true, Sandboxed: true}) {
		t.Errorf("run_command: %+v, want only Asks and Sandboxed", Info(ToolRunCommand))
	}
	// ralph's own writers may change any file as far as checkpoints know;
	// they write only ralph's records, which --sandbox read-only keeps.
	for _, name := range []string{ToolRemember, ToolCompleteTask} {
		if i := Info(name); i.ReadOnly || i.WritesPaths || !i.WritesInProcess || !i.Records {
			t.Errorf("%s: %+v, want WritesInProcess and Records", name, i)
		}
	}
	for _, name := range []string{ToolWriteFile, ToolEditFile} {
		if !Info(name).WritesInProcess {
			t.Errorf("%s writes from ralph's process but is not marked so", name)
		}
	}
}
