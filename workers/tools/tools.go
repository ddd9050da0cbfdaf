package tools

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
)

// ToolDef is what the model sees of a tool (OpenAI function calling):
// the one definition, shared with the conversation and the model client.
type ToolDef = conversation.ToolDef

// The names of the tools the model sees. They are a contract (docs/tools.md,
// the table of tools): conversations, reports and the person's
// approval rules name them, so they never change.
const (
	ToolReadFile   = "read_file"
	ToolWriteFile  = "write_file"
	ToolEditFile   = "edit_file"
	ToolListFiles  = "list_files"
	ToolSearch     = "search"
	ToolRunCommand = "run_command"
	// ToolCommandOutput and ToolStopCommand read and stop run_command's
	// background commands.
	ToolCommandOutput  = "command_output"
	ToolStopCommand    = "stop_command"
	ToolRemember       = "remember"
	ToolCompleteTask   = "complete_task"
	ToolRecordDecision = "record_decision"
	// ToolSpawnAgent is the coordinator's tool that starts a child agent;
	// its row is in the list, its running in the coordinator.
	ToolSpawnAgent = "spawn_agent"
	// ToolAskUser asks the person a question (ask_user.go).
	ToolAskUser = "ask_user"
	// The tools a review's agents finish with (report_findings.go,
	// judge_findings.go, fixes_done.go); their running is the review's.
	ToolReportFindings = "report_findings"
	ToolJudgeFindings  = "judge_findings"
	ToolFixesDone      = "fixes_done"
)

// ToolInfo is what a tool needs and does, declared beside it in the
// list: the sandbox mode, the network and the approvals follow from it
// (Mode.Allows, Toolset.Call, adddirs.go), and so does what the rest of
// ralph assumes of a call (checkpoints, the run's report).
type ToolInfo struct {
	// ReadOnly tools change nothing in the work tree: a turn that called
	// only these needs no checkpoint, and a reviewer is given only these.
	ReadOnly bool
	// WritesPaths tools write only the file named by their "path"
	// argument, so the files a turn changed are known without looking.
	WritesPaths bool
	// WritesInProcess tools write files from ralph's own process, outside
	// the sandbox, so --sandbox read-only does not offer them, unless
	// Records.
	WritesInProcess bool
	// Records tools write only ralph's own records (the task list, the
	// progress and learnings files, the plan, the decisions), through
	// which ralph keeps its books: --sandbox read-only keeps them, so a
	// read-only run can still finish a task.
	Records bool
	// Network tools reach the network themselves (not through a sandboxed
	// command): --no-network does not offer them.
	Network bool
	// Paths tools take a "path" argument that may name a file in a
	// directory added with --add-dir (adddirs.go).
	Paths bool
	// Sandboxed tools write only through the commands they start in the
	// sandbox, whose guards check after each command what it did
	// (run_command): a call of one is no step of its own for the nested
	// guard, which checks after every other tool that is not ReadOnly
	// (nestedstep.go).
	Sandboxed bool
	// Asks tools ask the person before a call no rule allows (the
	// approval policy), so an allow rule (--allowed-tools) changes what
	// they do. write_file and edit_file ask only for ask_before's
	// patterns, which no rule overrides, so allowing them changes
	// nothing.
	Asks bool
}

// tools is every tool ralph offers a model, its review's and the
// coordinator's spawn_agent included, in the one list: the key is the
// name of its description, <key>.md beside its <tool>.go; the params are
// its schema; the info is what it needs; roles are the agents it is
// offered to (its names and shapes in the tool families the models were
// trained on are families.go's); build is its
// constructor, which takes its dependencies from Deps (deps.go) and
// builds nothing when they are absent. Build is the one way a tool of
// the list is made, and Toolset.For the one way a role sees them, so the
// model's view of every tool is in one place and one golden file
// (testdata/tools.golden.json).
// tools is set in init: its constructors read the list (Def), which a
// variable's initializer may not.
var tools []toolSpec

func init() {
	tools = []toolSpec{
		{key: "read_file", name: ToolReadFile, params: ReadFileParams{}, roles: AllRoles,
			info:  ToolInfo{ReadOnly: true, Paths: true},
			build: func(d Deps) Tool { return d.files((*Toolset).readFileTool) }},
		{key: "write_file", name: ToolWriteFile, params: WriteFileParams{}, roles: Doers,
			info:  ToolInfo{WritesPaths: true, WritesInProcess: true, Paths: true},
			build: func(d Deps) Tool { return d.files((*Toolset).writeFileTool) }},
		{key: "edit_file", name: ToolEditFile, params: EditFileParams{}, roles: Doers,
			info:  ToolInfo{WritesPaths: true, WritesInProcess: true, Paths: true},
			build: func(d Deps) Tool { return d.files((*Toolset).editFileTool) }},
		// apply_patch is codex's tool: the families trained on it are
		// offered it (families.go), and a model of any family that calls
		// it gets it.
		{key: "apply_patch", name: ToolApplyPatch, params: ApplyPatchParams{}, roles: Doers,
			info:  ToolInfo{WritesInProcess: true},
			build: func(d Deps) Tool { return d.files((*Toolset).applyPatchTool) }},
		// diagnostics is offered only to a session with a language server
		// configured or found on PATH (diagnostics.go); it changes
		// nothing, and reads only the project's files (not an --add-dir's:
		// no Paths), by the path its links lead to.
		{key: "diagnostics", name: ToolDiagnostics, params: DiagnosticsParams{}, roles: AllRoles,
			info:  ToolInfo{ReadOnly: true},
			build: func(d Deps) Tool { return d.files((*Toolset).diagnosticsTool) }},
		{key: "list_files", name: ToolListFiles, params: ListFilesParams{}, roles: AllRoles,
			info:  ToolInfo{ReadOnly: true, Paths: true},
			build: func(d Deps) Tool { return d.files((*Toolset).listFilesTool) }},
		{key: "search", name: ToolSearch, params: SearchParams{}, roles: AllRoles,
			info:  ToolInfo{ReadOnly: true, Paths: true},
			build: func(d Deps) Tool { return d.files((*Toolset).searchTool) }},
		// run_command stays in read-only and without the network: the sandbox
		// holds the command to the mode, and reading needs commands too.
		{key: "run_command", name: ToolRunCommand, params: RunCommandParams{}, roles: Doers,
			info:  ToolInfo{Asks: true, Sandboxed: true},
			build: func(d Deps) Tool { return d.files((*Toolset).runCommandTool) }},
		// The background commands' tools read and stop only what
		// run_command started, so they ask nobody and change no file
		// themselves. Claude Code's names are its current ones
		// (TaskOutput, TaskStop), with the older BashOutput and KillShell
		// as aliases and both ids in the input.
		{key: "command_output", name: ToolCommandOutput, params: CommandOutputParams{}, roles: Doers,
			info:  ToolInfo{ReadOnly: true},
			build: func(d Deps) Tool { return d.files((*Toolset).commandOutputTool) }},
		{key: "stop_command", name: ToolStopCommand, params: StopCommandParams{}, roles: Doers,
			info:  ToolInfo{ReadOnly: true},
			build: func(d Deps) Tool { return d.files((*Toolset).stopCommandTool) }},
		// web_fetch reaches the network from ralph's own process, outside
		// the sandbox: --no-network does not offer it (Network), the
		// approval policy asks per domain (Asks), and it writes nothing,
		// so read-only keeps it, as the sandbox keeps commands' network.
		{key: "web_fetch", name: ToolWebFetch, params: WebFetchParams{}, roles: Doers,
			info:  ToolInfo{ReadOnly: true, Network: true, Asks: true},
			build: func(d Deps) Tool { return d.files((*Toolset).webFetchTool) }},
		{key: "remember", name: ToolRemember, params: RememberParams{}, roles: Doers,
			info:  ToolInfo{WritesInProcess: true, Records: true},
			build: func(d Deps) Tool { return d.state(newRememberTool) }},
		{key: "complete_task", name: ToolCompleteTask, params: CompleteTaskParams{}, roles: RoleMain,
			info:  ToolInfo{WritesInProcess: true, Records: true},
			build: func(d Deps) Tool { return d.state(newCompleteTaskTool) }},
		// The task loop's complete_task only reports the task done, for
		// ralph to verify before marking it (the loop's claim).
		{key: "complete_task_loop", name: ToolCompleteTask, params: CompleteTaskParams{}, roles: RoleWorker,
			info:  ToolInfo{WritesInProcess: true, Records: true},
			build: func(d Deps) Tool { return d.run("complete_task_loop", d.Claim) }},
		{key: "record_decision", name: ToolRecordDecision, params: RecordDecisionParams{}, roles: AllRoles,
			info: ToolInfo{ReadOnly: true, Records: true},
			build: func(d Deps) Tool {
				if d.Decide == nil {
					return nil
				}
				return newRecordDecisionTool(d.Decide)
			}},
		{key: "ask_user", name: ToolAskUser, params: AskUserParams{}, roles: AllRoles,
			info: ToolInfo{ReadOnly: true},
			build: func(d Deps) Tool {
				if d.Asker == nil {
					return nil
				}
				return newAskUserTool(d.Asker)
			}},
		{key: "write_plan", name: ToolWritePlan, params: WritePlanParams{}, roles: RoleMain,
			info: ToolInfo{WritesInProcess: true, Records: true},
			build: func(d Deps) Tool {
				if d.Plan == nil {
					return nil
				}
				return d.Plan.tool()
			}},
		// update_plan is the model's working list for the session, not
		// write_plan's RALPH_TASKS.md; a review's agents keep none.
		{key: "update_plan", name: ToolUpdatePlan, params: UpdatePlanParams{}, roles: RoleMain | RoleChild | RoleWorker,
			info: ToolInfo{ReadOnly: true, Records: true},
			build: func(d Deps) Tool {
				if d.Todo == nil {
					return nil
				}
				return newUpdatePlanTool(d.Todo)
			}},
		// skill is offered only to a session that found skills, to every
		// agent that does the work (the list reaches a child's prompt with
		// the tool: coordinator.Children.Skills).
		{key: "skill", name: ToolSkill, params: SkillParams{}, roles: Doers,
			info: ToolInfo{ReadOnly: true},
			build: func(d Deps) Tool {
				if d.Skills == nil || len(d.Skills.ForModel()) == 0 {
					return nil
				}
				return newSkillTool(d.Skills, d.Root)
			}},
		// spawn_agent is run by the coordinator, which alone starts agents;
		// its row says who is offered it.
		{key: "spawn_agent", name: ToolSpawnAgent, params: SpawnAgentParams{}, roles: RoleMain,
			build: func(d Deps) Tool { return d.run("spawn_agent", d.Spawn) }},
		{key: "report_findings", name: ToolReportFindings, params: ReportFindingsParams{}, roles: RoleReviewer,
			info:  ToolInfo{ReadOnly: true, Records: true},
			build: func(d Deps) Tool { return d.run("report_findings", d.Findings) }},
		{key: "judge_findings", name: ToolJudgeFindings, params: JudgeFindingsParams{}, roles: RoleReviewer,
			info:  ToolInfo{ReadOnly: true, Records: true},
			build: func(d Deps) Tool { return d.run("judge_findings", d.Verdicts) }},
		{key: "fixes_done", name: ToolFixesDone, params: FixesDoneParams{}, roles: RoleFixer,
			info:  ToolInfo{ReadOnly: true, Records: true},
			build: func(d Deps) Tool { return d.run("fixes_done", d.Fixed) }},
	}
}

// toolSpec is one row of tools.
type toolSpec struct {
	key    string
	name   string
	params any
	info   ToolInfo
	roles  Role
	build  func(Deps) Tool
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
	panic("tool " + key + " is not in the list of tools (workers/tools/tools.go)")
}

// Info returns what is known of the named tool; a tool ralph does not
// know (an MCP server's) may do anything.
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
func NewTool(def ToolDef, run func(ctx context.Context, args json.RawMessage) workers.Result) Tool {
	return funcTool{def: def, run: run}
}

type funcTool struct {
	def ToolDef
	run func(ctx context.Context, args json.RawMessage) workers.Result
}

func (t funcTool) Def() ToolDef { return t.def }

func (t funcTool) Run(ctx context.Context, args json.RawMessage) workers.Result {
	return t.run(ctx, args)
}
