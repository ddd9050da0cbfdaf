package hooks

// Common is what every event sends. TranscriptPath is the session's
// transcript in Claude Code's JSONL (transcript.jsonl beside ralph's own
// records, memory.Session), which loop hooks parse for the last
// assistant message; PermissionMode is ralph's mode in Claude Code's
// names (PermissionMode).
type Common struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	HookEventName  Event  `json:"hook_event_name"`
}

// Input is the JSON a hook reads on standard input, one type per event.
// Tool names and inputs are in Claude Code's shape (Bash with command,
// Write with file_path and content): the caller maps ralph's tools
// (workers/tools.Peer, PeerInput) before building one.
type Input interface {
	// common is the part every event sends, so the Runner can fill in
	// hook_event_name.
	common() *Common
	// MatchValue is what the event's matchers are matched against.
	MatchValue() string
}

func (c *Common) common() *Common { return c }

// PreToolUseInput is sent before a tool runs.
type PreToolUseInput struct {
	Common
	ToolName  string         `json:"tool_name"`
	ToolInput map[string]any `json:"tool_input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

// MatchValue is the tool's Claude name.
func (in *PreToolUseInput) MatchValue() string { return in.ToolName }

// PostToolUseInput is sent after a tool succeeded.
type PostToolUseInput struct {
	Common
	ToolName     string         `json:"tool_name"`
	ToolInput    map[string]any `json:"tool_input"`
	ToolResponse any            `json:"tool_response"`
	ToolUseID    string         `json:"tool_use_id,omitempty"`
}

// MatchValue is the tool's Claude name.
func (in *PostToolUseInput) MatchValue() string { return in.ToolName }

// PostToolUseFailureInput is sent after a tool failed.
type PostToolUseFailureInput struct {
	Common
	ToolName    string         `json:"tool_name"`
	ToolInput   map[string]any `json:"tool_input"`
	ToolUseID   string         `json:"tool_use_id,omitempty"`
	Error       string         `json:"error"`
	IsInterrupt bool           `json:"is_interrupt,omitempty"`
}

// MatchValue is the tool's Claude name.
func (in *PostToolUseFailureInput) MatchValue() string { return in.ToolName }

// UserPromptSubmitInput is sent before the person's prompt reaches the
// model.
type UserPromptSubmitInput struct {
	Common
	Prompt string `json:"prompt"`
}

// MatchValue is empty: the event has no matcher.
func (in *UserPromptSubmitInput) MatchValue() string { return "" }

// StopInput is sent when the agent (Stop) or a child agent (SubagentStop,
// with HookEventName set so) is about to finish. StopHookActive is true
// when it goes on only because a Stop hook said so before, so a hook can
// let it finish; LastAssistantMessage is the answer it gave.
type StopInput struct {
	Common
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
}

// MatchValue is empty: the event has no matcher.
func (in *StopInput) MatchValue() string { return "" }

// SessionStartInput is sent when a session starts; Source is startup,
// resume, clear or compact.
type SessionStartInput struct {
	Common
	Source string `json:"source"`
	Model  string `json:"model,omitempty"`
}

// MatchValue is the source.
func (in *SessionStartInput) MatchValue() string { return in.Source }

// SessionEndInput is sent when a session ends; Reason is clear, logout,
// prompt_input_exit or other.
type SessionEndInput struct {
	Common
	Reason string `json:"reason"`
}

// MatchValue is the reason.
func (in *SessionEndInput) MatchValue() string { return in.Reason }

// PreCompactInput is sent before the conversation is compacted; Trigger
// is manual or auto.
type PreCompactInput struct {
	Common
	Trigger            string `json:"trigger"`
	CustomInstructions string `json:"custom_instructions"`
}

// MatchValue is the trigger.
func (in *PreCompactInput) MatchValue() string { return in.Trigger }

// NotificationInput is sent with what ralph tells the person (in ralph's
// wording).
type NotificationInput struct {
	Common
	Message          string `json:"message"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
}

// MatchValue is the notification's type.
func (in *NotificationInput) MatchValue() string { return in.NotificationType }

// Claude Code's permission modes, as permission_mode names them.
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeBypass      = "bypassPermissions"
	ModeDontAsk     = "dontAsk"
)

// PermissionMode is ralph's approval mode in Claude Code's name for the
// mode that does the same: a read-only sandbox is plan, --yes (with
// bypassPermissions and --dangerously-skip-permissions) is
// bypassPermissions, --permission-mode dontAsk is dontAsk, and ralph's
// default, which writes files without asking and asks about commands,
// is acceptEdits.
func PermissionMode(readOnly, yes, neverAsk bool) string {
	switch {
	case readOnly:
		return ModePlan
	case neverAsk:
		return ModeDontAsk
	case yes:
		return ModeBypass
	}
	return ModeAcceptEdits
}

// PermissionRequestInput is sent when ralph's approval policy is about to
// ask the person about a tool call (Claude Code's permission dialog).
// PermissionSuggestions is what ralph would offer to remember ("always"),
// in Claude Code's shape; ralph sends none.
type PermissionRequestInput struct {
	Common
	ToolName              string         `json:"tool_name"`
	ToolInput             map[string]any `json:"tool_input"`
	ToolUseID             string         `json:"tool_use_id,omitempty"`
	PermissionSuggestions []any          `json:"permission_suggestions,omitempty"`
}

// MatchValue is the tool's Claude name.
func (in *PermissionRequestInput) MatchValue() string { return in.ToolName }

// PermissionDeniedInput is sent when the approval policy or the person
// refused a tool call; Reason is what the model is told.
type PermissionDeniedInput struct {
	Common
	ToolName  string         `json:"tool_name"`
	ToolInput map[string]any `json:"tool_input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
	Reason    string         `json:"reason"`
}

// MatchValue is the tool's Claude name.
func (in *PermissionDeniedInput) MatchValue() string { return in.ToolName }

// SubagentStartInput is sent when a child agent starts: AgentID is
// ralph's id of it, AgentType the definition it follows
// ("general-purpose" for none, as Claude Code names its default agent).
type SubagentStartInput struct {
	Common
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// MatchValue is the agent's type.
func (in *SubagentStartInput) MatchValue() string { return in.AgentType }

// StopFailureInput is sent instead of Stop when an endpoint error ended
// the turn: Error is Claude Code's name of its kind (rate_limit,
// authentication_failed, billing_error, invalid_request,
// model_not_found, server_error, unknown), ErrorDetails ralph's sentence.
type StopFailureInput struct {
	Common
	Error                string `json:"error"`
	ErrorDetails         string `json:"error_details,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
}

// MatchValue is the error's kind.
func (in *StopFailureInput) MatchValue() string { return in.Error }

// PostCompactInput is sent after the conversation was compacted, with the
// summary that replaced it.
type PostCompactInput struct {
	Common
	Trigger        string `json:"trigger"`
	CompactSummary string `json:"compact_summary"`
}

// MatchValue is the trigger.
func (in *PostCompactInput) MatchValue() string { return in.Trigger }

// InstructionsLoadedInput is sent for each instructions file the session
// read (AGENTS.md, CLAUDE.md and the files they import): MemoryType is
// Project, or User for one under the home directory; LoadReason is
// session_start, compact (read again after a compaction) or include (an
// @import, with ParentFilePath the file that imported it).
type InstructionsLoadedInput struct {
	Common
	FilePath       string `json:"file_path"`
	MemoryType     string `json:"memory_type"`
	LoadReason     string `json:"load_reason"`
	ParentFilePath string `json:"parent_file_path,omitempty"`
}

// MatchValue is the load reason.
func (in *InstructionsLoadedInput) MatchValue() string { return in.LoadReason }
