package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
)

// Claude Code's tools, as Anthropic's models were trained on them: their
// names and input shapes are Claude Code's (the npm package
// @anthropic-ai/claude-agent-sdk's sdk-tools.d.ts, and the tools claude
// 2.1.197 sends, testdata/claude-code-tools), their descriptions say what
// ralph's versions do. The same faces are what hooks, rules and agent
// definitions written for Claude Code see and name (Peer, HookName).

// BashParams is Claude Code's Bash.
type BashParams struct {
	Command                   string   `json:"command" required:"true" description:"The command to execute"`
	Timeout                   *float64 `json:"timeout" description:"Optional timeout in milliseconds (max 3600000); default 120000"`
	Description               string   `json:"description" description:"What the command does, in 5-10 words of active voice, for the person watching"`
	RunInBackground           bool     `json:"run_in_background" description:"Set to true to start the command in the background and return at once with its id; read its output with TaskOutput and stop it with TaskStop"`
	DangerouslyDisableSandbox bool     `json:"dangerouslyDisableSandbox" description:"Set to true to run the command outside the sandbox, only when the sandbox blocked something the task really needs; the user is asked every time"`
}

// ReadParams is Claude Code's Read.
type ReadParams struct {
	FilePath string `json:"file_path" required:"true" description:"The path of the file to read, absolute or relative to the project root"`
	Offset   int    `json:"offset" description:"The line number to start reading from. Only provide if the file is too large to read at once"`
	Limit    int    `json:"limit" description:"The number of lines to read. Only provide if the file is too large to read at once"`
}

// WriteParams is Claude Code's Write.
type WriteParams struct {
	FilePath string `json:"file_path" required:"true" description:"The path of the file to write, absolute or relative to the project root"`
	Content  string `json:"content" required:"true" description:"The content to write to the file"`
}

// EditParams is Claude Code's Edit.
type EditParams struct {
	FilePath   string `json:"file_path" required:"true" description:"The path of the file to modify, absolute or relative to the project root"`
	OldString  string `json:"old_string" required:"true" description:"The text to replace"`
	NewString  string `json:"new_string" required:"true" description:"The text to replace it with (must be different from old_string)"`
	ReplaceAll bool   `json:"replace_all" description:"Replace all occurrences of old_string (default false)"`
}

// GlobParams is Claude Code's Glob.
type GlobParams struct {
	Pattern string `json:"pattern" required:"true" description:"The glob pattern to match files against, e.g. \"**/*.go\""`
	Path    string `json:"path" description:"The directory to search in; omit it for the project root"`
}

// GrepParams is Claude Code's Grep.
type GrepParams struct {
	Pattern    string `json:"pattern" required:"true" description:"The regular expression to search for in file contents (RE2 syntax)"`
	Path       string `json:"path" description:"File or directory to search in; defaults to the project root"`
	Glob       string `json:"glob" description:"Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"`
	OutputMode string `json:"output_mode" enum:"content,files_with_matches,count" description:"\"content\" shows matching lines (supports -A/-B/-C, -n, head_limit), \"files_with_matches\" shows file paths, \"count\" shows match counts. Defaults to \"files_with_matches\""`
	Before     *int   `json:"-B" description:"Number of lines to show before each match; requires output_mode \"content\""`
	After      *int   `json:"-A" description:"Number of lines to show after each match; requires output_mode \"content\""`
	Context    *int   `json:"-C" description:"Number of lines to show before and after each match; requires output_mode \"content\""`
	LineNums   *bool  `json:"-n" description:"Show line numbers in output; requires output_mode \"content\". Defaults to true"`
	IgnoreCase bool   `json:"-i" description:"Case insensitive search"`
	Type       string `json:"type" description:"File type to search (go, js, ts, py, rust, java, …)"`
	HeadLimit  *int   `json:"head_limit" description:"Limit output to the first N lines or entries; defaults to 250, 0 for unlimited"`
	Offset     int    `json:"offset" description:"Skip the first N lines or entries before applying head_limit"`
	Multiline  bool   `json:"multiline" description:"Enable multiline mode, where . matches newlines and patterns can span lines"`
}

// TodoWriteParams is Claude Code's TodoWrite.
type TodoWriteParams struct {
	Todos []TodoWriteItem `json:"todos" required:"true" items:"object" description:"The updated todo list"`
}

// TodoWriteItem is one of TodoWrite's todos.
type TodoWriteItem struct {
	Content    string `json:"content" required:"true" description:"What to do, in the imperative"`
	Status     string `json:"status" required:"true" enum:"pending,in_progress,completed" description:"At most one todo is in_progress"`
	ActiveForm string `json:"activeForm" required:"true" description:"What is being done, in the present continuous"`
}

// WebFetchClaudeParams is Claude Code's WebFetch.
type WebFetchClaudeParams struct {
	URL    string `json:"url" required:"true" description:"The URL to fetch content from"`
	Prompt string `json:"prompt" required:"true" description:"What you want from the page"`
}

// TaskParams is Claude Code's Task (Agent in its later versions).
type TaskParams struct {
	Description  string `json:"description" required:"true" description:"A short (3-5 word) description of the task"`
	Prompt       string `json:"prompt" required:"true" description:"The task for the agent to perform"`
	SubagentType string `json:"subagent_type" description:"The agent definition to follow, one the system prompt lists; omit it for a general agent"`
}

// TaskOutputParams is Claude Code's TaskOutput.
type TaskOutputParams struct {
	TaskID  string   `json:"task_id" required:"true" description:"The background command's id, as Bash gave it"`
	Block   *bool    `json:"block" description:"Whether to wait for the command to end (default true)"`
	Timeout *float64 `json:"timeout" description:"Max wait time in ms (default 30000, at most 600000)"`
}

// TaskStopParams is Claude Code's TaskStop.
type TaskStopParams struct {
	TaskID  string `json:"task_id" description:"The ID of the background command to stop"`
	ShellID string `json:"shell_id" description:"Deprecated: use task_id instead"`
}

// SkillClaudeParams is Claude Code's Skill.
type SkillClaudeParams struct {
	Skill string `json:"skill" required:"true" description:"The name of a skill from the list of available skills"`
	Args  string `json:"args" description:"Optional arguments for the skill"`
}

// claudeFamily is Claude Code's faces of ralph's tools.
func claudeFamily() family {
	return family{
		faces: []face{
			// NotebookRead is Claude Code's older reader of .ipynb files,
			// which agent definitions still name: read_file reads a
			// notebook's JSON, cells and outputs as they are.
			{tool: ToolReadFile, name: "Read", aliases: []string{"NotebookRead"}, doc: "claude_read", params: ReadParams{},
				renames: map[string]string{"file_path": "path", "offset": "offset", "limit": "limit"}},
			{tool: ToolWriteFile, name: "Write", doc: "claude_write", params: WriteParams{},
				renames: map[string]string{"file_path": "path", "content": "content"}},
			{tool: ToolEditFile, name: "Edit", aliases: []string{"MultiEdit"}, doc: "claude_edit", params: EditParams{},
				renames: map[string]string{"file_path": "path", "old_string": "old_string", "new_string": "new_string",
					"replace_all": "replace_all", "edits": "edits"}},
			{tool: ToolListFiles, name: "Glob", aliases: []string{"LS"}, doc: "claude_glob", params: GlobParams{},
				renames: map[string]string{"pattern": "pattern", "path": "path"}},
			{tool: ToolSearch, name: "Grep", doc: "claude_grep", params: GrepParams{}, in: grepIn, out: grepOut},
			{tool: ToolRunCommand, name: "Bash", doc: "claude_bash", params: BashParams{}, in: bashIn, out: bashOut},
			{tool: ToolCommandOutput, name: "TaskOutput", aliases: []string{"BashOutput", "BashOutputTool"}, doc: "claude_taskoutput",
				params: TaskOutputParams{}, in: taskOutputIn, out: taskOutputOut},
			{tool: ToolStopCommand, name: "TaskStop", aliases: []string{"KillShell", "KillBash"}, doc: "claude_taskstop",
				params: TaskStopParams{}, in: taskStopIn, out: taskStopOut},
			{tool: ToolWebFetch, name: "WebFetch", doc: "claude_webfetch", params: WebFetchClaudeParams{},
				renames: map[string]string{"url": "url", "prompt": "prompt"}},
			{tool: ToolUpdatePlan, name: "TodoWrite", doc: "claude_todowrite", params: TodoWriteParams{}, in: todoWriteIn, out: todoWriteOut},
			{tool: ToolSkill, name: "Skill", doc: "claude_skill", params: SkillClaudeParams{},
				renames: map[string]string{"skill": "skill"}},
			{tool: ToolSpawnAgent, name: "Task", aliases: []string{"Agent"}, doc: "claude_task", params: TaskParams{}, in: taskIn, out: taskOut},
		},
		covered: ralphCovered,
	}
}

// peerFace is the Claude family's face of ralph's tool name (Peer), nil
// when Claude Code has no such tool.
func peerFace(name string) *face {
	fc := familyOf(providers.FamilyClaude).faceFor(name, nil)
	if fc == nil || fc.hiddenFace {
		return nil
	}
	return fc
}

// object decodes a call's input, a JSON object.
func object(name string, args json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the arguments of %s are not a JSON object", name)
	}
	return m, nil
}

// encode marshals a map of arguments (sorted keys: the same bytes every
// time), without escaping <, > and & as json.Marshal does for HTML: the
// records show a command as it was written.
func encode(m map[string]any) (json.RawMessage, bool) {
	b, err := marshalArgs(m)
	return b, err == nil
}

// marshalArgs is json.Marshal without its HTML escapes.
func marshalArgs(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// millisToSeconds is a timeout in milliseconds as ralph's seconds.
func millisToSeconds(raw json.RawMessage) (float64, bool) {
	var ms float64
	if json.Unmarshal(raw, &ms) != nil || ms <= 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0, false
	}
	return ms / 1000, true
}

func bashIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("Bash", args)
	if err != nil {
		return "", nil, err
	}
	out := map[string]any{}
	if v, ok := in["command"]; ok {
		out["command"] = v
	}
	if v, ok := in["timeout"]; ok {
		if s, ok := millisToSeconds(v); ok {
			out["timeout_s"] = s
		}
	}
	copyBool(in, "run_in_background", out, "background")
	copyBool(in, "dangerouslyDisableSandbox", out, "unsandboxed")
	b, _ := encode(out)
	return ToolRunCommand, b, nil
}

// copyBool copies a true boolean field from in to out under another name.
func copyBool(in map[string]json.RawMessage, from string, out map[string]any, to string) {
	var b bool
	if v, ok := in[from]; ok && json.Unmarshal(v, &b) == nil && b {
		out[to] = true
	}
}

func bashOut(args json.RawMessage) (json.RawMessage, bool) {
	var a RunCommandParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	out := map[string]any{"command": a.Command}
	if a.TimeoutS != nil {
		out["timeout"] = math.Round(*a.TimeoutS * 1000)
	}
	if a.Background {
		out["run_in_background"] = true
	}
	if a.Unsandboxed {
		out["dangerouslyDisableSandbox"] = true
	}
	return encode(out)
}

func taskOutputIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("TaskOutput", args)
	if err != nil {
		return "", nil, err
	}
	out := map[string]any{}
	for _, k := range []string{"task_id", "bash_id", "shell_id"} {
		if v, ok := in[k]; ok {
			out["id"] = v
			break
		}
	}
	if v, ok := in["filter"]; ok {
		out["filter"] = v
	}
	// Claude Code's TaskOutput waits by default, up to 30 s.
	block := true
	if v, ok := in["block"]; ok {
		_ = json.Unmarshal(v, &block)
	}
	if block {
		wait := 30.0
		if v, ok := in["timeout"]; ok {
			if s, ok := millisToSeconds(v); ok {
				wait = s
			}
		}
		out["wait_s"] = wait
	}
	b, _ := encode(out)
	return ToolCommandOutput, b, nil
}

func taskOutputOut(args json.RawMessage) (json.RawMessage, bool) {
	var a CommandOutputParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	// bash_id is BashOutput's, which hooks written for its time read.
	out := map[string]any{"task_id": a.ID, "bash_id": a.ID, "block": a.WaitS != nil}
	if a.WaitS != nil {
		out["timeout"] = math.Round(*a.WaitS * 1000)
	}
	if a.Filter != "" {
		out["filter"] = a.Filter
	}
	return encode(out)
}

func taskStopIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("TaskStop", args)
	if err != nil {
		return "", nil, err
	}
	out := map[string]any{}
	for _, k := range []string{"task_id", "shell_id", "bash_id"} {
		if v, ok := in[k]; ok {
			out["id"] = v
			break
		}
	}
	b, _ := encode(out)
	return ToolStopCommand, b, nil
}

func taskStopOut(args json.RawMessage) (json.RawMessage, bool) {
	var a StopCommandParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	// shell_id is KillShell's, which hooks written for its time read.
	return encode(map[string]any{"task_id": a.ID, "shell_id": a.ID})
}

func todoWriteIn(args json.RawMessage) (string, json.RawMessage, error) {
	var updated map[string]any
	if err := json.Unmarshal(args, &updated); err != nil || updated == nil {
		return "", nil, fmt.Errorf("the arguments of TodoWrite are not a JSON object")
	}
	out, err := todoFromPeer(nil, updated)
	if err != nil {
		return "", nil, err
	}
	// Only the plan: TodoWrite has no explanation, and a hook's input
	// laid over ralph's arguments keeps the one they had.
	var plan struct {
		Plan json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		return "", nil, err
	}
	b, _ := encode(map[string]any{"plan": plan.Plan})
	return ToolUpdatePlan, b, nil
}

func todoWriteOut(args json.RawMessage) (json.RawMessage, bool) {
	m, ok := todoToPeer(args)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

// generalAgent is Claude Code's subagent_type for an agent of no
// definition, which ralph's spawn_agent leaves out.
const generalAgent = "general-purpose"

func taskIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("Task", args)
	if err != nil {
		return "", nil, err
	}
	out := map[string]any{}
	if v, ok := in["prompt"]; ok {
		out["task"] = v
	}
	var agent string
	if v, ok := in["subagent_type"]; ok && json.Unmarshal(v, &agent) == nil && agent != "" && agent != generalAgent {
		out["agent"] = agent
	}
	b, _ := encode(out)
	return ToolSpawnAgent, b, nil
}

func taskOut(args json.RawMessage) (json.RawMessage, bool) {
	var a SpawnAgentParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	agent := a.Agent
	if agent == "" {
		agent = generalAgent
	}
	first, _, _ := strings.Cut(strings.TrimSpace(a.Task), "\n")
	return encode(map[string]any{"description": text.ClipRunes(first, 40, "…"), "prompt": a.Task, "subagent_type": agent})
}

func grepIn(args json.RawMessage) (string, json.RawMessage, error) {
	in, err := object("Grep", args)
	if err != nil {
		return "", nil, err
	}
	out, err := SearchArgsFromGrep(in)
	if err != nil {
		return "", nil, err
	}
	return ToolSearch, out, nil
}

func grepOut(args json.RawMessage) (json.RawMessage, bool) {
	m, ok := GrepInputFromSearch(args)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(m)
	return b, err == nil
}
