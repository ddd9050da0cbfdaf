package hooks

import (
	"encoding/json"
	"testing"
)

// TestInputsMarshalAsClaudeCodeSendsThem checks the field names a hook
// written for Claude Code reads, event by event.
func TestInputsMarshalAsClaudeCodeSendsThem(t *testing.T) {
	c := Common{SessionID: "s", TranscriptPath: "/t", Cwd: "/p"}
	for _, tc := range []struct {
		event Event
		in    Input
		want  string
	}{
		{Stop, &StopInput{Common: c}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false}`},
		{SubagentStop, &StopInput{Common: c, StopHookActive: true}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"SubagentStop","stop_hook_active":true}`},
		{SessionStart, &SessionStartInput{Common: c, Source: "compact"}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"SessionStart","source":"compact"}`},
		{SessionEnd, &SessionEndInput{Common: c, Reason: "other"}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}`},
		{UserPromptSubmit, &UserPromptSubmitInput{Common: c, Prompt: "fix it"}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`},
		{PostToolUse, &PostToolUseInput{Common: c, ToolName: "Edit", ToolInput: map[string]any{"file_path": "/p/a.go", "old_string": "a", "new_string": "b"}, ToolResponse: map[string]any{"filePath": "/p/a.go"}, ToolUseID: "c1"},
			`{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/p/a.go","new_string":"b","old_string":"a"},"tool_response":{"filePath":"/p/a.go"},"tool_use_id":"c1"}`},
		{PostToolUseFailure, &PostToolUseFailureInput{Common: c, ToolName: "Bash", ToolInput: map[string]any{"command": "false"}, Error: "exit status 1"},
			`{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"error":"exit status 1"}`},
		{PreCompact, &PreCompactInput{Common: c, Trigger: "auto"}, `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`},
		{Notification, &NotificationInput{Common: c, Message: "ralph needs your approval", NotificationType: "permission_prompt"},
			`{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"Notification","message":"ralph needs your approval","notification_type":"permission_prompt"}`},
	} {
		tc.in.common().HookEventName = tc.event
		got, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.event, got, tc.want)
		}
	}
}
