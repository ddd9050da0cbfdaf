package agents

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// This file is what is particular to Claude Code, run as claude -p
// --output-format stream-json --verbose with the prompt on stdin. Sources:
// Claude Code's headless-mode documentation (docs.anthropic.com/en/docs/
// claude-code/sdk/sdk-headless: stream-json needs --verbose, the last line
// is the result object) and the Agent SDK's message types (assistant
// messages in the Messages API shape; the result's result, is_error,
// total_cost_usd and usage).

// AgentClaude is Claude Code.
const AgentClaude Kind = "claude"

type claudeCLI struct{}

func (claudeCLI) kind() Kind { return AgentClaude }

func (claudeCLI) args(extra []string) []string {
	return append([]string{"-p", "--output-format", "stream-json", "--verbose"}, extra...)
}

// keepEnv keeps ANTHROPIC_* and CLAUDE_*. Claude Code can call the model
// through Bedrock or Vertex instead, and then authenticates with that
// cloud's credentials.
func (claudeCLI) keepEnv(env []string) []string {
	keep := []string{"ANTHROPIC_*", "CLAUDE_*"}
	if envValue(env, "CLAUDE_CODE_USE_BEDROCK") != "" {
		keep = append(keep, "AWS_*")
	}
	if envValue(env, "CLAUDE_CODE_USE_VERTEX") != "" {
		keep = append(keep, "GOOGLE_APPLICATION_CREDENTIALS")
	}
	return keep
}

func (claudeCLI) configure(p Policy, user []string) ([]string, []string) {
	return claudeDefaults(p, user), nil
}

func (claudeCLI) writes(a Agent) string {
	if setsOption(a.Args, "--dangerously-skip-permissions") {
		return "claude runs with --dangerously-skip-permissions: it may do anything"
	}
	mode, ok := optionValue(a.Args, "--permission-mode")
	switch {
	case !ok:
		return "claude runs with the permission mode of its own settings"
	case mode == "acceptEdits" && strings.Contains(strings.Join(a.Args, " "), "autoAllowBashIfSandboxed"):
		return "claude runs with --permission-mode acceptEdits and its own sandbox for Bash (-y): it may edit and run commands inside the project"
	case mode == "acceptEdits":
		return "claude runs with --permission-mode acceptEdits: it may edit files in the project and run plain file commands (touch, rm, a redirection); other commands need permissions.allow in ~/.claude/settings.json (ralph gives claude the person's settings only) or -y"
	case mode == "default":
		return "claude runs with --permission-mode default: without a terminal it may change no file unless permissions.allow says so"
	}
	return "claude runs with --permission-mode " + mode
}

func (claudeCLI) configModel(Agent) string { return "" }

func (claudeCLI) parseLine(s *agentStream, b []byte) bool { return s.claudeLine(b) }

// denialHint says how to allow a refused tool in claude's own settings.
func (claudeCLI) denialHint(d Denial) string {
	switch d.Tool {
	case "Bash":
		rule := "Bash"
		if w := strings.Fields(d.Input); len(w) > 0 {
			rule = fmt.Sprintf("Bash(%s:*)", w[0])
		}
		return fmt.Sprintf("add %q to permissions.allow in ~/.claude/settings.json, or pass --agent-arg=--allowedTools --agent-arg=%q, or run ralph with -y (claude's sandbox then runs Bash)", rule, rule)
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return "ralph gives claude --permission-mode acceptEdits unless its --sandbox is read-only or --agent-arg sets another mode; check permissions.deny in ~/.claude/settings.json"
	}
	return fmt.Sprintf("add %q to permissions.allow in ~/.claude/settings.json, or pass --agent-arg=--allowedTools --agent-arg=%q", d.Tool, d.Tool)
}

func (claudeCLI) gets() string {
	return "claude --permission-mode acceptEdits (plus its own sandbox for Bash under -y) and allowed_commands as --allowedTools"
}

func (claudeCLI) reportsCost() bool { return true }

func (claudeCLI) mergeEnv(_, _, ours string) string { return ours }

// claudeLegacyRe is claude 1.0's "Claude AI usage limit reached|<unix seconds>".
var claudeLegacyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)usage limit reached\|(\d{9,11})\b`) })

// usageLimit reads claude 1.0's limit message, which names the reset in
// unix seconds; later versions use the common words.
func (claudeCLI) usageLimit(s string, _ time.Time) (UsageLimit, bool) {
	m := claudeLegacyRe().FindStringSubmatch(s)
	if m == nil {
		return UsageLimit{}, false
	}
	secs, _ := strconv.ParseInt(m[1], 10, 64)
	return UsageLimit{Until: time.Unix(secs, 0), Text: limitLine(s, m[0])}, true
}

// claudeSandboxSettings turn on Claude Code's own sandbox for its Bash
// tool, with commands inside it approved and no way out of it, and no
// start without it: ralph's workspace-write under -y.
const claudeSandboxSettings = `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"failIfUnavailable":true}}`

func claudeDefaults(p Policy, user []string) []string {
	mode := sandboxMode(p)
	var def []string
	// The project's .claude/settings.json and settings.local.json are the
	// model's to write, and their hooks run outside any sandbox: claude
	// reads the person's own settings only (workers/programs.go).
	if !setsOption(user, "--setting-sources") {
		def = append(def, "--setting-sources", "user")
	}
	if !setsOption(user, "--permission-mode", "--dangerously-skip-permissions") {
		pm := "acceptEdits"
		if mode == sandboxReadOnly {
			pm = "default" // claude -p then refuses every edit
		}
		def = append(def, "--permission-mode", pm)
	}
	if mode == sandboxReadOnly {
		return def // Bash could write anything: no rule of ralph's may open it
	}
	var tools []string
	for _, r := range p.Allowed {
		if r = strings.Join(strings.Fields(r), " "); r != "" {
			tools = append(tools, "Bash("+r+":*)")
		}
	}
	if p.Yes && mode == sandboxFull {
		tools = append(tools, "Bash")
	}
	if len(tools) > 0 {
		def = append(append(def, "--allowedTools"), tools...)
	}
	if p.Yes && mode == sandboxWorkspace {
		def = append(def, "--settings", claudeSandboxSettings)
	}
	return def
}

// claudeEvent is one line of claude -p --output-format stream-json --verbose:
// "system" (init), "assistant" and "user" messages in the Anthropic Messages
// shape, and a last "result" with the answer, cost and cumulative usage.
type claudeEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message *struct {
		Content json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"message"`
	Result  *string `json:"result"`
	IsError bool    `json:"is_error"`
	// Error marks claude's synthetic assistant message about a failed
	// API call ("rate_limit", "unknown", …).
	Error        string       `json:"error"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
	// PermissionDenials and Errors are read apart (see claudeResultDetails),
	// so that a shape ralph does not expect cannot make the whole line
	// unreadable.
	PermissionDenials json.RawMessage `json:"permission_denials"`
	Errors            json.RawMessage `json:"errors"`
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// A tool_result block (in a "user" message) answers the tool_use
	// whose id is ToolUseID; Content is a string or a list of blocks.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeUsage is Anthropic's usage, where input_tokens excludes the prompt
// tokens written to or read from the cache. They are added back so that
// InputTokens means the whole prompt, as it does for OpenAI models.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// claudeLine handles a claude event and reports whether b was one.
func (s *agentStream) claudeLine(b []byte) bool {
	var ev claudeEvent
	if json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return false
	}
	switch ev.Type {
	case "assistant":
		var blocks []claudeBlock
		if ev.Message != nil && json.Unmarshal(ev.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					if ev.Error != "" {
						s.noteLimit(bl.Text)
					}
					s.assistantText(bl.Text)
				case "tool_use":
					s.claudeToolUse(bl)
					s.send(Event{Kind: "tool", Text: toolSummary(bl.Name, string(bl.Input))})
				}
			}
		}
	case "user":
		var blocks []claudeBlock
		if ev.Message != nil && json.Unmarshal(ev.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				if bl.Type == "tool_result" {
					s.claudeToolResult(bl)
				}
			}
		}
	case "result":
		if ev.Result != nil {
			s.final, s.hasFinal = *ev.Result, true
			s.checkText(*ev.Result)
		}
		if ev.TotalCostUSD != nil {
			c := *ev.TotalCostUSD
			s.cost = &c
		}
		if u := ev.Usage; u != nil {
			s.usage = conversation.Usage{
				InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
				OutputTokens: u.OutputTokens,
				// The cached parts are priced apart (llm.Price.Cost).
				CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens,
			}
			usage := s.usage
			s.send(Event{Kind: "usage", Usage: &usage})
		}
		s.claudeResultDetails(ev)
	case "rate_limit_event":
		if l, ok := claudeRateLimit(b); ok {
			s.keepLimit(l)
		}
	}
	return true // system and future events carry nothing ralph uses
}

// claudeToolUse notes a Bash call, to pair it with its result.
func (s *agentStream) claudeToolUse(bl claudeBlock) {
	if bl.Name != "Bash" || bl.ID == "" {
		return
	}
	s.calls[bl.ID] = toolCall{name: bl.Name, input: bl.Input}
}

// claudeToolResult records the result of a Bash call as the last command.
func (s *agentStream) claudeToolResult(bl claudeBlock) {
	call, ok := s.calls[bl.ToolUseID]
	if !ok {
		return
	}
	delete(s.calls, bl.ToolUseID)
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(call.input, &in)
	s.lastCmd = &AgentCommand{Command: in.Command, Failed: bl.IsError, Output: firstLine(blockText(bl.Content))}
}

// blockText is a tool result's content: a string, or the text of a list
// of blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// claudeResultDetails reads the result's error and permission denials.
func (s *agentStream) claudeResultDetails(ev claudeEvent) {
	var denials []struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if json.Unmarshal(ev.PermissionDenials, &denials) == nil {
		for _, d := range denials {
			s.denials = append(s.denials, Denial{Tool: d.ToolName, Input: denialInput(d.ToolInput)})
		}
	}
	if !ev.IsError {
		return
	}
	msg := ""
	if ev.Result != nil {
		msg = strings.TrimSpace(*ev.Result)
	}
	if msg == "" {
		var errs []string
		_ = json.Unmarshal(ev.Errors, &errs)
		msg = "it ended with " + ev.Subtype
		if len(errs) > 0 {
			msg += " (" + errs[0] + ")"
		}
	}
	s.noteLimit(msg)
	s.agentErr = msg
	s.send(Event{Kind: "error", Text: capEventText(msg)})
}

// claudeRateLimit reads claude's rate_limit_event: a limit when its status
// is "rejected", with resetsAt in unix seconds.
func claudeRateLimit(b []byte) (UsageLimit, bool) {
	var ev struct {
		Info struct {
			Status   string  `json:"status"`
			ResetsAt float64 `json:"resetsAt"`
			Type     string  `json:"rateLimitType"`
		} `json:"rate_limit_info"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.Info.Status != "rejected" {
		return UsageLimit{}, false
	}
	l := UsageLimit{Text: "claude's " + strings.ReplaceAll(ev.Info.Type, "_", "-") + " limit was reached"}
	if ev.Info.Type == "" {
		l.Text = "claude's usage limit was reached"
	}
	if ev.Info.ResetsAt > 0 {
		secs := int64(ev.Info.ResetsAt)
		if secs > 1e12 { // milliseconds, should a version send them
			secs /= 1000
		}
		l.Until = time.Unix(secs, 0)
	}
	return l, true
}

// logins: the OAuth credentials claude keeps in ~/.claude (or
// $CLAUDE_CONFIG_DIR) on Linux; macOS keeps them in the keychain.
func (claudeCLI) logins() []sandbox.HiddenPath {
	return []sandbox.HiddenPath{{Home: ".claude/.credentials.json", Env: "CLAUDE_CONFIG_DIR", Under: ".credentials.json"}}
}

// projectSettings: none; --setting-sources user (claudeDefaults) keeps
// the project's .claude/settings.json and settings.local.json out.
func (claudeCLI) projectSettings() []string { return nil }

func (claudeCLI) promptDirs() []sandbox.HiddenPath { return nil }

func (claudeCLI) skillDirs() []string { return []string{".claude/skills"} }

func (claudeCLI) hookSettings() (HookSettings, bool) {
	return HookSettings{Shared: ".claude/settings.json", Local: ".claude/settings.local.json"}, true
}

func (claudeCLI) definitionDirs() []string { return []string{".claude/agents"} }

func (claudeCLI) commandDirs() []string { return []string{".claude/commands"} }

func (claudeCLI) pluginManifest() string { return ".claude-plugin/plugin.json" }

func (claudeCLI) officialMarket() string { return "claude-plugins-official" }

// PersonInstructionFile is the person's instructions for every project,
// as Claude Code reads them (its memory docs: user memory), relative to
// the home directory.
const PersonInstructionFile = ".claude/CLAUDE.md"

// RulesDir is where Claude Code's memory keeps rules files (its memory
// docs: `.claude/rules/*.md`), relative to the home directory for the
// person's rules and to the project root for the project's.
const RulesDir = ".claude/rules"

// PersonSettingsFile is the person's own settings, relative to the home
// directory, whose env ralph gives the model's commands.
const PersonSettingsFile = ".claude/settings.json"

func (claudeCLI) pluginSettings() string { return ".claude/settings.json" }
