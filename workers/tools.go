package workers

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// ToolDef is what the model sees of a tool (OpenAI function calling):
// the one definition, shared with the conversation and the model client.
type ToolDef = conversation.ToolDef

// The names of the tools the model sees. They are a contract (DESIGN.md,
// "Tool names the model sees"): conversations, reports and the person's
// approval rules name them, so they never change.
const (
	ToolReadFile       = "read_file"
	ToolWriteFile      = "write_file"
	ToolEditFile       = "edit_file"
	ToolListFiles      = "list_files"
	ToolSearch         = "search"
	ToolRunCommand     = "run_command"
	ToolRemember       = "remember"
	ToolCompleteTask   = "complete_task"
	ToolRecordDecision = "record_decision"
	// ToolSpawnAgent is the coordinator's tool that starts a child agent;
	// its definition is here (SpawnAgentDef), its running there.
	ToolSpawnAgent = "spawn_agent"
	// ToolAskUser asks the person a question (ask_user.go).
	ToolAskUser = "ask_user"
)

// ToolInfo is what the rest of ralph needs to know about a tool besides
// its definition.
type ToolInfo struct {
	// ReadOnly tools change nothing in the work tree: a turn that called
	// only these needs no checkpoint.
	ReadOnly bool
	// WritesPaths tools write only the file named by their "path"
	// argument, so the files a turn changed are known without looking.
	WritesPaths bool
	// WritesInProcess tools write files from ralph's own process, outside
	// the sandbox, so --sandbox read-only refuses them (Toolset.Call).
	WritesInProcess bool
}

var toolInfo = map[string]ToolInfo{
	ToolReadFile:       {ReadOnly: true},
	ToolListFiles:      {ReadOnly: true},
	ToolSearch:         {ReadOnly: true},
	ToolRecordDecision: {ReadOnly: true},
	ToolAskUser:        {ReadOnly: true},
	ToolWriteFile:      {WritesPaths: true, WritesInProcess: true},
	ToolEditFile:       {WritesPaths: true, WritesInProcess: true},
	ToolRemember:       {WritesInProcess: true},
	ToolCompleteTask:   {WritesInProcess: true},
}

// Info returns what is known of the named tool; a tool ralph does not
// know (an MCP server's, run_command, spawn_agent) may do anything.
func Info(name string) ToolInfo { return toolInfo[name] }

// description is a tool's embedded <tool>.md as the model reads it.
func description(md string) string { return strings.TrimRight(md, "\n") }
