//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACPPermission: a command the policy asks about is a
// session/request_permission naming the pending tool call, with Yes,
// Always (the command's rule can form) and No. Yes runs it once; No and
// a cancelled request do not; Always runs it and writes the rule into
// the person's config exactly as chat's [a]lways does; an editor that
// goes away while it is asked is a no, and ralph ends.
func TestACPPermission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		runs   bool
		rule   string
	}{
		{"yes", true, ""},
		{"no", false, ""},
		{"cancel", false, ""},
		{"always", true, "allowed_commands = [\"touch\"]\n"},
		{"disconnect", false, ""},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			t.Parallel()
			dir, env, _ := acpProject(t, toolScenario(t, "acp-permission", [][]toolCall{{{"run_command", `{"command":"touch made"}`}}}, "done"))
			s := acpEditor(t, dir, env, acpPlan{Answers: []string{tc.answer}, Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "touch it"}}})
			if exists(filepath.Join(dir, "made")) != tc.runs {
				t.Fatalf("the command ran = %v; results: %s\nstderr:\n%s", !tc.runs, s.toolText(), s.stderr)
			}
			asked := s.requests("session/request_permission")
			if len(asked) != 1 {
				t.Fatalf("%d permission requests", len(asked))
			}
			var q struct {
				ToolCall struct {
					ToolCallID string `json:"toolCallId"`
				} `json:"toolCall"`
				Options []struct {
					OptionID string `json:"optionId"`
					Kind     string `json:"kind"`
					Name     string `json:"name"`
				} `json:"options"`
			}
			if err := json.Unmarshal(asked[0].Params, &q); err != nil {
				t.Fatal(err)
			}
			var opts []string
			for _, o := range q.Options {
				opts = append(opts, o.Kind+":"+o.Name)
			}
			if got := strings.Join(opts, " "); !strings.HasPrefix(got, "allow_once:Allow once allow_always:Always allow ") || !strings.HasSuffix(got, " reject_once:Deny") {
				t.Errorf("options %s", got)
			}
			if p := string(asked[0].Params); strings.Contains(p, "[y]es") || strings.Contains(p, "explains)") {
				t.Errorf("the question names the terminal's keys to an editor: %s", p)
			}
			var callID string
			for _, u := range s.updates() {
				if u["sessionUpdate"] == "tool_call" {
					callID, _ = u["toolCallId"].(string)
				}
			}
			if callID == "" || q.ToolCall.ToolCallID != callID {
				t.Errorf("the request names %q, the call was %q", q.ToolCall.ToolCallID, callID)
			}
			rule, _ := os.ReadFile(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"))
			if string(rule) != tc.rule {
				t.Errorf("the person's config.toml = %q, want %q", rule, tc.rule)
			}
			if tc.answer == "disconnect" {
				if !strings.Contains(s.kinds(), "tool_call") {
					t.Errorf("updates %s", s.kinds())
				}
				for _, e := range s.log {
					if e.Event == "exit" && (e.Code == nil || *e.Code != 0) {
						t.Errorf("ralph acp ended with %v after the editor went away; stderr:\n%s", e.Code, s.stderr)
					}
				}
				return
			}
			if r := s.stopReason(t, 0); r != "end_turn" {
				t.Errorf("stop reason %q", r)
			}
		})
	}
}
