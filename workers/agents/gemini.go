package agents

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// This file is Gemini CLI (@google/gemini-cli) as an external agent: its
// command line, its stream-json output and its permission flags. Sources:
// the CLI's own help and its headless-mode code (packages/cli/src/
// nonInteractiveCli.ts and packages/core/src/output/types.ts in
// github.com/google-gemini/gemini-cli), checked against version 0.61.0
// driven against ralph's stand-in model (testdata/agents/samples/gemini_*).
//
// gemini -p "" --output-format stream-json reads the prompt from stdin
// (-p's text is appended to stdin's, and empty adds nothing) and writes
// one JSON object a line: "init", "message" (the user's prompt, then the
// assistant's text in pieces with "delta":true), "tool_use" (tool_name,
// tool_id, parameters), "tool_result" (tool_id, status success or error,
// output, error{type,message}), "error" (severity warning or error) and a
// last "result" (status success or error, error{type,message}, stats with
// the tokens of the whole run). It reports no cost.
//
// Permissions: headless, the CLI never asks. In --approval-mode default it
// does not even offer the model the tools that would need asking (edits
// and shell commands), and a call to one comes back as a tool_result with
// error type "tool_not_registered"; auto_edit adds write_file and replace,
// which refuse paths outside the workspace; yolo adds run_shell_command
// without any sandbox of its own; --allowed-tools "run_shell_command(go
// test)" adds the commands that start so. Its -s sandbox needs Docker or
// Podman (or macOS's sandbox-exec), so ralph does not turn it on.
//
// Exit codes: 0 when the run ended, even if a tool failed; 41 when no
// authentication is configured, 55 in a directory it does not trust
// (ralph passes --skip-trust: it has chosen the directory), and on an API
// error the HTTP status modulo 256 (400 → 144, 429 → 173), after the
// error result line.

// AgentGemini is Gemini CLI.
const AgentGemini Kind = "gemini"

type geminiCLI struct{}

func (geminiCLI) kind() Kind { return AgentGemini }

// args: -p's text is appended to stdin's; empty, it only makes the run
// headless.
func (geminiCLI) args(extra []string) []string {
	return append([]string{"-p", "", "--output-format", "stream-json"}, extra...)
}

// keepEnv keeps gemini's key and settings. Gemini CLI can call the model
// through Vertex AI instead, and then authenticates with Google Cloud's
// credentials.
func (geminiCLI) keepEnv(env []string) []string {
	keep := []string{"GEMINI_*", "GOOGLE_GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_GENAI_*"}
	if envValue(env, "GOOGLE_GENAI_USE_VERTEXAI") != "" {
		keep = append(keep, "GOOGLE_CLOUD_*", "GOOGLE_APPLICATION_CREDENTIALS")
	}
	return keep
}

func (geminiCLI) configure(p Policy, user []string) ([]string, []string) {
	return geminiDefaults(p, user), nil
}

func (geminiCLI) writes(a Agent) string { return geminiWrites(a.Args) }

func (geminiCLI) configModel(Agent) string { return "" }

func (geminiCLI) parseLine(s *agentStream, b []byte) bool { return s.geminiLine(b) }

func (geminiCLI) denialHint(d Denial) string { return geminiDenialHint(d) }

// reportsCost: gemini reports tokens, never a cost.
func (geminiCLI) gets() string {
	return "gemini --approval-mode auto_edit with allowed_commands as --allowed-tools (yolo under -y --sandbox danger-full-access)"
}

func (geminiCLI) reportsCost() bool { return false }

func (geminiCLI) mergeEnv(_, _, ours string) string { return ours }

// geminiDailyQuotaRe finds Gemini CLI's words for a per-day quota.
var geminiDailyQuotaRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)exhausted your daily quota`) })

// usageLimit reads gemini's per-day quota, which resets at midnight
// Pacific time.
func (geminiCLI) usageLimit(s string, now time.Time) (UsageLimit, bool) {
	w := geminiDailyQuotaRe().FindString(s)
	if w == "" {
		return UsageLimit{}, false
	}
	return UsageLimit{Until: nextPacificMidnight(now), Text: limitLine(s, w)}, true
}

// nextPacificMidnight is when the Gemini API's daily quotas next reset;
// zero without time zone data, so that ralph waits its default instead.
func nextPacificMidnight(now time.Time) time.Time {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		return time.Time{}
	}
	t := now.In(la)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, la)
}

// geminiEvent is one line of gemini's stream-json.
type geminiEvent struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int `json:"input_tokens"` // includes the cached ones
		OutputTokens int `json:"output_tokens"`
	} `json:"stats"`
}

// geminiGated are the tools gemini offers only when its approval mode or
// --allowed-tools let them run: a call to one that was not offered is a
// permission refused, not a model's typo.
var geminiGated = map[string]bool{"write_file": true, "replace": true, "run_shell_command": true}

// geminiDenied are the error types of a tool call gemini's policy or
// workspace refused.
var geminiDenied = map[string]bool{"policy_violation": true, "permission_denied": true, "path_not_in_workspace": true}

// geminiLine handles a gemini event and reports whether b was one.
func (s *agentStream) geminiLine(b []byte) bool {
	var ev geminiEvent
	if json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return false
	}
	switch ev.Type {
	case "message":
		if ev.Role != "assistant" {
			break
		}
		// The answer comes in pieces; the message is all of them since
		// the last tool call, and the final one is the last such message.
		s.final += ev.Content
		s.hasFinal = true
		s.checkText(s.final)
		if strings.TrimSpace(ev.Content) != "" {
			s.lastText = s.final
			s.send(Event{Kind: "text", Text: capEventText(ev.Content)})
		}
	case "tool_use":
		s.final, s.hasFinal = "", false
		s.calls[ev.ToolID] = toolCall{name: ev.ToolName, input: ev.Parameters}
		s.send(Event{Kind: "tool", Text: toolSummary(ev.ToolName, string(ev.Parameters))})
	case "tool_result":
		s.geminiToolResult(ev)
	case "error":
		s.noteLimit(ev.Message)
		if ev.Severity == "error" {
			s.agentErr = ev.Message
			s.send(Event{Kind: "error", Text: capEventText(ev.Message)})
		} else {
			s.send(Event{Kind: "warning", Text: capEventText(ev.Message)})
		}
	case "result":
		if u := ev.Stats; u != nil {
			s.usage = conversation.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
			usage := s.usage
			s.send(Event{Kind: "usage", Usage: &usage})
		}
		if ev.Status == "error" {
			msg := "it ended with an error"
			if ev.Error != nil && strings.TrimSpace(ev.Error.Message) != "" {
				msg = ev.Error.Message
			}
			s.noteLimit(msg)
			s.agentErr = msg
			s.send(Event{Kind: "error", Text: capEventText(msg)})
		}
	}
	return true // init, the user's message and future events carry nothing ralph uses
}

// geminiToolResult pairs a result with its call: a refused call is a
// denial, a shell command the last command.
func (s *agentStream) geminiToolResult(ev geminiEvent) {
	call, ok := s.calls[ev.ToolID]
	if !ok {
		return
	}
	delete(s.calls, ev.ToolID)
	errType, errMsg := "", ""
	if ev.Error != nil {
		errType, errMsg = ev.Error.Type, ev.Error.Message
	}
	if ev.Status == "error" && (geminiDenied[errType] || errType == "tool_not_registered" && geminiGated[call.name]) {
		s.denials = append(s.denials, Denial{Tool: call.name, Input: denialInput(call.input)})
		return
	}
	if call.name != "run_shell_command" {
		return
	}
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(call.input, &in)
	out := ev.Output
	if ev.Status == "error" && errMsg != "" {
		out = errMsg
	}
	// gemini reports a command that exits non-zero as a success with its
	// output; only a command it could not run is an error.
	s.lastCmd = &AgentCommand{Command: in.Command, Failed: ev.Status == "error", Output: firstLine(out)}
}

// geminiDefaults are ralph's arguments for gemini under p: --skip-trust,
// and the approval mode and allowed commands nearest ralph's sandbox.
func geminiDefaults(p Policy, user []string) []string {
	var def []string
	if !setsOption(user, "--skip-trust") {
		def = append(def, "--skip-trust")
	}
	if setsOption(user, "--approval-mode", "--yolo", "-y") {
		return def
	}
	mode := sandboxMode(p)
	switch {
	case mode == sandboxReadOnly:
		return append(def, "--approval-mode", "default") // no edit or shell tool is offered
	case p.Yes && mode == sandboxFull:
		return append(def, "--approval-mode", "yolo")
	}
	def = append(def, "--approval-mode", "auto_edit")
	var tools []string
	for _, r := range p.Allowed {
		if r = strings.Join(strings.Fields(r), " "); r != "" {
			tools = append(tools, "run_shell_command("+r+")")
		}
	}
	if len(tools) > 0 && !setsOption(user, "--allowed-tools") {
		def = append(append(def, "--allowed-tools"), tools...)
	}
	return def
}

// geminiWrites says what gemini may change under its arguments.
func geminiWrites(args []string) string {
	if setsOption(args, "--yolo", "-y") {
		return "gemini runs with --yolo: it may edit files and run any command, without a sandbox"
	}
	mode, ok := optionValue(args, "--approval-mode")
	switch {
	case !ok:
		return "gemini runs with the approval mode of its own settings"
	case mode == "yolo":
		return "gemini runs with --approval-mode yolo: it may edit files and run any command, without a sandbox"
	case mode == "auto_edit" && setsOption(args, "--allowed-tools"):
		return "gemini runs with --approval-mode auto_edit: it may edit files in the project and run the commands of --allowed-tools (ralph's allowed_commands), no others"
	case mode == "auto_edit":
		return "gemini runs with --approval-mode auto_edit: it may edit files in the project but run no shell command; allowed_commands or -y with --sandbox danger-full-access open them"
	case mode == "default" || mode == "plan":
		return "gemini runs with --approval-mode " + mode + ": without a terminal it may change no file and run no command"
	}
	return "gemini runs with --approval-mode " + mode
}

// geminiDenialHint says how to allow a tool gemini refused.
func geminiDenialHint(d Denial) string {
	if d.Tool == "run_shell_command" {
		rule := "run_shell_command"
		if w := strings.Fields(d.Input); len(w) > 0 {
			rule = fmt.Sprintf("run_shell_command(%s)", w[0])
		}
		return fmt.Sprintf("add the command to allowed_commands in ralph's config, or pass --agent-arg=--allowed-tools --agent-arg=%q, or run ralph with -y --sandbox danger-full-access (gemini's --yolo)", rule)
	}
	return "ralph gives gemini --approval-mode auto_edit unless its --sandbox is read-only or --agent-arg sets another mode; check the policies of gemini's settings"
}

// logins: the Gemini CLI keeps oauth_creds.json, google_accounts.json
// and an .env that may hold GEMINI_API_KEY in ~/.gemini: all of it.
func (geminiCLI) logins() []sandbox.HiddenPath {
	return []sandbox.HiddenPath{{Home: ".gemini"}}
}

// projectSettings: gemini reads .gemini/settings.json (hooks, MCP
// servers, a tool discovery command) and .gemini/.env in every folder it
// trusts, and without a terminal it runs only in a trusted one
// (--skip-trust, which ralph passes); no switch keeps them out.
func (geminiCLI) projectSettings() []string {
	return []string{".gemini/settings.json", ".gemini/.env"}
}

func (geminiCLI) promptDirs() []sandbox.HiddenPath { return nil }

func (geminiCLI) skillDirs() []string { return nil }

func (geminiCLI) hookSettings() (HookSettings, bool) { return HookSettings{}, false }

func (geminiCLI) definitionDirs() []string { return nil }

func (geminiCLI) commandDirs() []string { return nil }

func (geminiCLI) pluginManifest() string { return "" }

func (geminiCLI) officialMarket() string { return "" }

func (geminiCLI) pluginSettings() string { return "" }
