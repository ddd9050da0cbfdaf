package cli

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Stream shapes (--stream-shape): which lines --output-format stream-json
// prints. ralph's own is the event contract (contract.go,
// docs/events.md); claude is Claude Code's `claude -p --output-format
// stream-json --verbose`, for the jq filters, CI actions and SDK wrappers
// written against it. The claude shape is a translation of ralph's events
// made here, at the edge: the contract itself does not change.
const (
	ShapeRalph  = "ralph"
	ShapeClaude = "claude"
)

// ValidateShape checks a --stream-shape value against the output format
// it goes with; its error is one sentence, and is ErrBadFormat.
func ValidateShape(shape, format string) error {
	switch shape {
	case "", ShapeRalph:
		return nil
	case ShapeClaude:
		if format != FormatStreamJSON {
			return badShape(fmt.Sprintf("--stream-shape claude goes with --output-format stream-json, not %s", format))
		}
		return nil
	}
	return badShape(fmt.Sprintf("--stream-shape %q is not one of ralph or claude", shape))
}

// badShape is a --stream-shape refused, said as it is: the sentence
// names the flag, so it is no "unknown output format".
type badShape string

func (e badShape) Error() string { return string(e) }

// Is makes a bad shape a bad format to errors.Is.
func (badShape) Is(target error) bool { return target == ErrBadFormat }

// claudeStream writes a one-shot's events in Claude Code's stream-json
// shape: a system init line when a run starts, an assistant line for each
// block of the model's (thinking, text, tool_use), a user line for each
// tool_result, and a result line last. Its keys and their types are those
// of claude 2.1.197's own lines (testdata/agents/samples/claude_*.jsonl,
// which TestClaudeShapeHasTheRecordedKeys compares it with); what ralph
// does not have (Claude Code's slash commands, an API key source) is
// there empty. Events with no counterpart in Claude Code's stream
// (retries, files changed, text deltas) are left out: the diagnostics
// among them go to stderr as in every format.
//
// Handle calls event on the broker's goroutine and Finish calls result on
// the caller's after the run ended, so its state needs no lock; its
// lines go through the face's encoder, which does.
type claudeStream struct {
	enc *streamEncoder
	// version is ralph's, said as claude_code_version; permissionMode
	// is the mode the run asks in, in Claude Code's names.
	version, permissionMode string
	cwd, model              string
	// toolNames lists the tools the run offers (the coordinator's, once
	// the face is attached); nil lists none.
	toolNames func() []string
	sessionID string
	// parents maps a child agent's id to the spawn_agent call that
	// started it: the parent_tool_use_id of that agent's lines.
	parents map[string]string
	// inited says an init line went out; wrote that the result line of
	// the last run did, so Finish writes no second one.
	inited, wrote bool
}

func newClaudeStream(enc *streamEncoder) *claudeStream {
	return &claudeStream{enc: enc, parents: map[string]string{}, permissionMode: "default"}
}

// claudeInit is Claude Code's system init line.
type claudeInit struct {
	Type                    string            `json:"type"`
	Subtype                 string            `json:"subtype"`
	Cwd                     string            `json:"cwd"`
	SessionID               string            `json:"session_id"`
	Tools                   []string          `json:"tools"`
	MCPServers              []claudeNamed     `json:"mcp_servers"`
	Model                   string            `json:"model"`
	PermissionMode          string            `json:"permissionMode"`
	SlashCommands           []string          `json:"slash_commands"`
	APIKeySource            string            `json:"apiKeySource"`
	ClaudeCodeVersion       string            `json:"claude_code_version"`
	OutputStyle             string            `json:"output_style"`
	Agents                  []string          `json:"agents"`
	Skills                  []string          `json:"skills"`
	Plugins                 []claudeNamed     `json:"plugins"`
	AnalyticsDisabled       bool              `json:"analytics_disabled"`
	ProductFeedbackDisabled bool              `json:"product_feedback_disabled"`
	UUID                    string            `json:"uuid"`
	MemoryPaths             map[string]string `json:"memory_paths"`
	FastModeState           string            `json:"fast_mode_state"`
}

// claudeNamed is an MCP server or a plugin of the init line.
type claudeNamed struct {
	Name   string `json:"name"`
	Status string `json:"status,omitempty"`
	Path   string `json:"path,omitempty"`
}

// claudeLine is an assistant or user line: a Messages API message and
// where it belongs.
type claudeLine struct {
	Type            string        `json:"type"`
	Message         claudeMessage `json:"message"`
	ParentToolUseID *string       `json:"parent_tool_use_id"`
	SessionID       string        `json:"session_id"`
	UUID            string        `json:"uuid"`
	// Timestamp and ToolUseResult are a tool_result's user line's.
	Timestamp     string `json:"timestamp,omitempty"`
	ToolUseResult any    `json:"tool_use_result,omitempty"`
}

// claudeMessage is the message of an assistant line (all its fields) or
// of a user line (role and content).
type claudeMessage struct {
	ID                string        `json:"id,omitempty"`
	Type              string        `json:"type,omitempty"`
	Role              string        `json:"role"`
	Model             string        `json:"model,omitempty"`
	Content           []any         `json:"content"`
	StopReason        *string       `json:"stop_reason,omitempty"`
	StopSequence      *string       `json:"stop_sequence,omitempty"`
	Usage             *claudeTokens `json:"usage,omitempty"`
	ContextManagement *struct{}     `json:"context_management,omitempty"`
	// assistant marks an assistant message, whose null members are
	// written as null (MarshalJSON).
	assistant bool
}

// MarshalJSON writes an assistant message with every member Claude
// Code's has, null ones included, and a user message with its two.
func (m claudeMessage) MarshalJSON() ([]byte, error) {
	if !m.assistant {
		return json.Marshal(struct {
			Role    string `json:"role"`
			Content []any  `json:"content"`
		}{m.Role, m.Content})
	}
	return json.Marshal(struct {
		ID                string        `json:"id"`
		Type              string        `json:"type"`
		Role              string        `json:"role"`
		Model             string        `json:"model"`
		Content           []any         `json:"content"`
		StopReason        *string       `json:"stop_reason"`
		StopSequence      *string       `json:"stop_sequence"`
		Usage             *claudeTokens `json:"usage"`
		ContextManagement *struct{}     `json:"context_management"`
	}{m.ID, m.Type, m.Role, m.Model, m.Content, m.StopReason, m.StopSequence, m.Usage, m.ContextManagement})
}

// claudeTokens is an assistant message's usage. ralph counts tokens per
// run, not per block, so a message's are 0; the result line has the
// run's.
type claudeTokens struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// The content blocks.
type (
	claudeText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	claudeThinking struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	claudeToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	claudeToolResult struct {
		ToolUseID string `json:"tool_use_id"`
		Type      string `json:"type"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	}
)

// claudeResult is Claude Code's result line: SDKResultSuccess, or, for
// any other subtype, SDKResultError, which carries errors instead of
// result.
type claudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	// APIErrorStatus is a success's only (null, or the HTTP status of
	// an API error): it holds a *int there and nil, left out, otherwise.
	APIErrorStatus    any                          `json:"api_error_status,omitempty"`
	DurationMS        int64                        `json:"duration_ms"`
	DurationAPIMS     int64                        `json:"duration_api_ms"`
	NumTurns          int                          `json:"num_turns"`
	Result            *string                      `json:"result,omitempty"`
	StopReason        *string                      `json:"stop_reason"`
	SessionID         string                       `json:"session_id"`
	TotalCostUSD      float64                      `json:"total_cost_usd"`
	Usage             claudeUsage                  `json:"usage"`
	ModelUsage        map[string]claudeModelTokens `json:"modelUsage"`
	PermissionDenials []claudeDenial               `json:"permission_denials"`
	TerminalReason    string                       `json:"terminal_reason"`
	FastModeState     string                       `json:"fast_mode_state"`
	UUID              string                       `json:"uuid"`
	Errors            []string                     `json:"errors,omitempty"`
}

// claudeUsage is the result line's usage, the Messages API's with Claude
// Code's additions.
type claudeUsage struct {
	InputTokens              int             `json:"input_tokens"`
	CacheCreationInputTokens int             `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int             `json:"cache_read_input_tokens"`
	OutputTokens             int             `json:"output_tokens"`
	ServerToolUse            claudeServerUse `json:"server_tool_use"`
	ServiceTier              string          `json:"service_tier"`
	CacheCreation            claudeCacheUse  `json:"cache_creation"`
	InferenceGeo             string          `json:"inference_geo"`
	Iterations               []any           `json:"iterations"`
	Speed                    string          `json:"speed"`
}

type claudeServerUse struct {
	WebSearchRequests int `json:"web_search_requests"`
	WebFetchRequests  int `json:"web_fetch_requests"`
}

type claudeCacheUse struct {
	Ephemeral1hInputTokens int `json:"ephemeral_1h_input_tokens"`
	Ephemeral5mInputTokens int `json:"ephemeral_5m_input_tokens"`
}

// claudeModelTokens is one model's line of modelUsage.
type claudeModelTokens struct {
	InputTokens              int     `json:"inputTokens"`
	OutputTokens             int     `json:"outputTokens"`
	CacheReadInputTokens     int     `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int     `json:"cacheCreationInputTokens"`
	WebSearchRequests        int     `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
	MaxOutputTokens          int     `json:"maxOutputTokens"`
}

// claudeDenial is a call refused for want of an approval. ralph's
// refusals do not keep the call's id, so tool_use_id is "".
type claudeDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// event writes ev's lines, if it has any in Claude Code's shape.
func (s *claudeStream) event(ev event.Event) {
	if ev.Model != "" {
		s.model = ev.Model
	}
	switch ev.Type {
	case event.SessionStarted:
		s.sessionID = ev.SessionID
		s.init()
	case event.AgentSpawned:
		if ev.AgentID != "" && ev.ToolID != "" {
			s.parents[ev.AgentID] = ev.ToolID
		}
	case event.Thinking:
		s.assistant(ev, claudeThinking{Type: "thinking", Thinking: ev.Text})
	case event.Assistant:
		if ev.Text != "" {
			s.assistant(ev, claudeText{Type: "text", Text: ev.Text})
		}
	case event.ToolCall:
		name, input := s.claudeTool(ev.ToolName, ev.ToolArgs)
		s.assistant(ev, claudeToolUse{Type: "tool_use", ID: ev.ToolID, Name: name, Input: input})
	case event.ToolResult:
		at := ev.Time
		if at.IsZero() {
			at = claudeNow()
		}
		s.enc.value(claudeLine{Type: "user", ParentToolUseID: s.parent(ev), SessionID: s.sessionID, UUID: newLineUUID(),
			Message:   claudeMessage{Role: "user", Content: []any{claudeToolResult{ToolUseID: ev.ToolID, Type: "tool_result", Content: ev.Output, IsError: ev.IsError}}},
			Timestamp: at.UTC().Format("2006-01-02T15:04:05.000Z"), ToolUseResult: ev.Output})
	}
}

// init writes the system init line of a run.
func (s *claudeStream) init() {
	s.inited = true
	names := []string{}
	if s.toolNames != nil {
		for _, n := range s.toolNames() {
			if n = tools.HookName(n); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	s.enc.value(claudeInit{Type: "system", Subtype: "init", Cwd: s.cwd, SessionID: s.sessionID, Tools: names,
		MCPServers: []claudeNamed{}, Model: s.model, PermissionMode: s.permissionMode, SlashCommands: []string{},
		APIKeySource: "none", ClaudeCodeVersion: s.version, OutputStyle: "default", Agents: []string{}, Skills: []string{},
		Plugins: []claudeNamed{}, AnalyticsDisabled: true, ProductFeedbackDisabled: true, UUID: newLineUUID(),
		MemoryPaths: map[string]string{"auto": s.cwd}, FastModeState: "off"})
}

// assistant writes one block of the model's as an assistant line. The
// blocks of one turn of one agent share the message id, as the blocks of
// one of Claude Code's API answers do.
func (s *claudeStream) assistant(ev event.Event, block any) {
	agent := ev.AgentID
	if agent == "" {
		agent = event.MainAgent
	}
	s.enc.value(claudeLine{Type: "assistant", ParentToolUseID: s.parent(ev), SessionID: s.sessionID, UUID: newLineUUID(),
		Message: claudeMessage{assistant: true, ID: fmt.Sprintf("msg_%s_%s_%d", s.sessionID, agent, ev.Turn), Type: "message",
			Role: "assistant", Model: s.model, Content: []any{block}, Usage: &claudeTokens{}}})
}

// parent is the parent_tool_use_id of ev's line: the spawn_agent call of
// a child agent's, null for the main agent's.
func (s *claudeStream) parent(ev event.Event) *string {
	if id, ok := s.parents[ev.AgentID]; ok {
		return &id
	}
	return nil
}

// claudeTool is a call of ralph's tool name with args as Claude Code
// writes its tool_use: under Claude Code's name and in its input shape,
// with an absolute file_path, as ralph's hooks see it (Bash with
// command, Write with file_path and content, …), so a filter written for
// claude's output (select(.name == "Bash")) finds ralph's commands. A
// tool Claude Code has none of keeps ralph's name and arguments
// (remember, complete_task).
func (s *claudeStream) claudeTool(name string, args json.RawMessage) (string, json.RawMessage) {
	peer, ok := tools.PeerInput(name, args)
	if !ok {
		return tools.HookName(name), toolInput(args)
	}
	for _, k := range []string{"file_path", "path"} {
		var p string
		if json.Unmarshal(peer[k], &p) == nil && p != "" && !filepath.IsAbs(p) && s.cwd != "" {
			peer[k], _ = json.Marshal(filepath.Join(s.cwd, p))
		}
	}
	b, err := json.Marshal(peer)
	if err != nil {
		return tools.HookName(name), toolInput(args)
	}
	return tools.HookName(name), b
}

// toolInput is a call's arguments as the tool_use block's input, which
// Claude Code's readers take to be an object: arguments the model gave
// as no JSON object are kept as the string they were, under "input".
func toolInput(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Unmarshal(args, &obj) == nil && obj != nil {
		return args
	}
	b, _ := json.Marshal(map[string]string{"input": string(args)})
	return b
}

// fail writes the result line of a one-shot that failed before it ran,
// after an init line if none went out (it names no session then).
func (s *claudeStream) fail(res event.Result) {
	if !s.inited {
		s.init()
	}
	s.result(res)
}

// result writes the run's result line.
func (s *claudeStream) result(res event.Result) {
	s.wrote = true
	if res.SessionID != "" {
		s.sessionID = res.SessionID
	}
	r := claudeResult{Type: "result", Subtype: claudeSubtype(res), IsError: res.IsError, DurationMS: res.Duration.Milliseconds(),
		NumTurns: res.NumTurns, SessionID: s.sessionID, Usage: newClaudeUsage(res.Usage), ModelUsage: map[string]claudeModelTokens{},
		PermissionDenials: []claudeDenial{}, TerminalReason: terminalReason(res), FastModeState: "off", UUID: newLineUUID()}
	if res.CostUSD != nil {
		r.TotalCostUSD = *res.CostUSD
	}
	if u := res.Usage; u != (conversation.Usage{}) && s.model != "" {
		r.ModelUsage[s.model] = claudeModelTokens{InputTokens: r.Usage.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheWriteTokens, WebSearchRequests: u.WebSearches,
			CostUSD: r.TotalCostUSD}
	}
	var status *int
	if le := (*llm.Error)(nil); errors.As(res.Err, &le) && le.Status != 0 {
		status = &le.Status
	}
	for _, d := range res.Denied {
		input := d.Args
		if d.Tool == tools.ToolRunCommand {
			input, _ = json.Marshal(map[string]string{"command": d.Command})
		}
		name, input := s.claudeTool(d.Tool, input)
		r.PermissionDenials = append(r.PermissionDenials, claudeDenial{ToolName: name, ToolInput: input})
	}
	stop := "end_turn"
	switch {
	case r.Subtype == event.SubtypeSuccess:
		text := res.Text
		r.Result, r.StopReason, r.APIErrorStatus = &text, &stop, status
	default:
		msg := res.Text
		if res.Err != nil {
			msg = res.Err.Error()
		}
		if msg == "" {
			msg = res.Subtype
		}
		r.Errors = []string{msg}
		// Claude Code's stop reason of a run that did not end at the
		// model's end_turn: tool_use when the model wanted another turn,
		// max_tokens when its answer was cut, and stop_sequence, what it
		// says of the message it ends a failed turn with, otherwise.
		switch res.Subtype {
		case event.SubtypeMaxTurns, event.SubtypeMaxIterations:
			stop = "tool_use"
		case event.SubtypeMaxTokens:
			stop = "max_tokens"
		default:
			stop = "stop_sequence"
		}
		r.StopReason = &stop
	}
	s.enc.value(r)
}

// claudeSubtype is ralph's subtype in Claude Code's words: its
// SDKResultError subtypes are error_max_turns and error_during_execution
// (besides budgets ralph's one-shot has none of), and an interrupted run
// is one of the latter there.
func claudeSubtype(res event.Result) string {
	switch res.Subtype {
	case event.SubtypeSuccess:
		if res.IsError {
			return event.SubtypeExecutionError
		}
		return res.Subtype
	case event.SubtypeMaxTurns, event.SubtypeMaxIterations:
		return event.SubtypeMaxTurns
	}
	return event.SubtypeExecutionError
}

// terminalReason is why the run ended, in Claude Code's TerminalReason
// words.
func terminalReason(res event.Result) string {
	var le *llm.Error
	switch {
	case !res.IsError:
		return "completed"
	case res.Subtype == event.SubtypeMaxTurns || res.Subtype == event.SubtypeMaxIterations:
		return "max_turns"
	case res.Subtype == event.SubtypeInterrupted:
		return "aborted_streaming"
	case errors.As(res.Err, &le):
		return "api_error"
	}
	return "model_error"
}

// newClaudeUsage is ralph's usage in the Messages API's terms, where
// input_tokens leaves out the tokens read from and written to the cache
// that ralph counts in InputTokens.
func newClaudeUsage(u conversation.Usage) claudeUsage {
	in := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return claudeUsage{InputTokens: in, CacheCreationInputTokens: u.CacheWriteTokens, CacheReadInputTokens: u.CacheReadTokens,
		OutputTokens: u.OutputTokens, ServerToolUse: claudeServerUse{WebSearchRequests: u.WebSearches}, ServiceTier: "standard",
		Iterations: []any{}, Speed: "standard"}
}

// newLineUUID is a random version 4 UUID, as Claude Code's line ids are.
func newLineUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// claudeNow is the time a line is stamped with when its event has none.
var claudeNow = time.Now
