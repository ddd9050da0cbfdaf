package workers

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// ToolDef is what the model sees of a tool (OpenAI function calling):
// the one definition, shared with the conversation and the model client.
type ToolDef = conversation.ToolDef

// The names of the tools the model sees. They are a contract (docs/tools.md,
// the table of tools): conversations, reports and the person's
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
	// The tools a review's agents finish with (report_findings.go,
	// judge_findings.go, fixes_done.go); their running is the review's.
	ToolReportFindings = "report_findings"
	ToolJudgeFindings  = "judge_findings"
	ToolFixesDone      = "fixes_done"
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

// tools is every tool ralph offers a model, its review's and the
// coordinator's spawn_agent included, in the one list: the key is the
// name of its description, <key>.md beside its <tool>.go; the params are
// its schema; the info is what the rest of ralph needs to know. A tool
// file takes its definition from here (Def) and adapts its function with
// NewTool, so that the model's view of every tool is in one place and one
// golden file (testdata/tools.golden.json).
var tools = []toolSpec{
	{key: "read_file", name: ToolReadFile, params: ReadFileParams{}, info: ToolInfo{ReadOnly: true}},
	{key: "write_file", name: ToolWriteFile, params: WriteFileParams{}, info: ToolInfo{WritesPaths: true, WritesInProcess: true}},
	{key: "edit_file", name: ToolEditFile, params: EditFileParams{}, info: ToolInfo{WritesPaths: true, WritesInProcess: true}},
	{key: "list_files", name: ToolListFiles, params: ListFilesParams{}, info: ToolInfo{ReadOnly: true}},
	{key: "search", name: ToolSearch, params: SearchParams{}, info: ToolInfo{ReadOnly: true}},
	{key: "run_command", name: ToolRunCommand, params: RunCommandParams{}},
	{key: "remember", name: ToolRemember, params: RememberParams{}, info: ToolInfo{WritesInProcess: true}},
	{key: "complete_task", name: ToolCompleteTask, params: CompleteTaskParams{}, info: ToolInfo{WritesInProcess: true}},
	// The task loop's complete_task only reports the task done, for
	// ralph to verify before marking it (the coordinator's claim tool).
	{key: "complete_task_loop", name: ToolCompleteTask, params: CompleteTaskParams{}, info: ToolInfo{WritesInProcess: true}},
	{key: "record_decision", name: ToolRecordDecision, params: RecordDecisionParams{}, info: ToolInfo{ReadOnly: true}},
	{key: "ask_user", name: ToolAskUser, params: AskUserParams{}, info: ToolInfo{ReadOnly: true}},
	{key: "write_plan", name: ToolWritePlan, params: WritePlanParams{}},
	{key: "spawn_agent", name: ToolSpawnAgent, params: SpawnAgentParams{}},
	{key: "report_findings", name: ToolReportFindings, params: ReportFindingsParams{}},
	{key: "judge_findings", name: ToolJudgeFindings, params: JudgeFindingsParams{}},
	{key: "fixes_done", name: ToolFixesDone, params: FixesDoneParams{}},
}

// toolSpec is one row of tools.
type toolSpec struct {
	key    string
	name   string
	params any
	info   ToolInfo
}

//go:embed *.md
var toolDocs embed.FS

// Def is the definition of the tool whose row in tools has key, its
// description read from <key>.md. An unknown key is a programming error.
func Def(key string) ToolDef {
	for _, t := range tools {
		if t.key == key {
			md, err := toolDocs.ReadFile(key + ".md")
			if err != nil {
				panic(fmt.Sprintf("tool %s has no %s.md: %v", key, key, err))
			}
			return ToolDef{Name: t.name, Description: strings.TrimRight(string(md), "\n"), Parameters: Schema(t.params)}
		}
	}
	panic("tool " + key + " is not in the list of tools (workers/tools.go)")
}

// Info returns what is known of the named tool; a tool ralph does not
// know (an MCP server's, run_command, spawn_agent) may do anything.
func Info(name string) ToolInfo {
	for _, t := range tools {
		if t.name == name {
			return t.info
		}
	}
	return ToolInfo{}
}

// NewTool is the one adapter of a definition and a function to the Tool
// interface, for every tool of the list.
func NewTool(def ToolDef, run func(ctx context.Context, args json.RawMessage) Result) Tool {
	return funcTool{def: def, run: run}
}

type funcTool struct {
	def ToolDef
	run func(ctx context.Context, args json.RawMessage) Result
}

func (t funcTool) Def() ToolDef { return t.def }

func (t funcTool) Run(ctx context.Context, args json.RawMessage) Result { return t.run(ctx, args) }
