package acp

import (
	"context"
	"fmt"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/workers/approval"
)

// The options of a permission request, by id.
const (
	optionYes    = "yes"
	optionAlways = "always"
	optionShare  = "always-project"
	optionNo     = "no"
)

// asker asks ralph's approval questions as session/request_permission:
// the policy and the remembered rules are the terminal's, and the client
// is asked only what the policy asks. It never answers for the client: a
// cancelled request, an error, or a client gone is a no.
type asker struct{ ss *session }

// questionSeq numbers the questions that are about no tool call (a hook
// or an MCP server about to start), which the request still names.
var questionSeq atomic.Int64

// Ask asks the client.
func (a asker) Ask(ctx context.Context, q approval.Question) (approval.Answer, error) {
	ss := a.ss
	// The tool call the question is about has reached the client first.
	ss.out.flush()
	id := ss.out.askingCall()
	title := q.What()
	call := sdk.ToolCallUpdate{
		Title:  &title,
		Status: new(sdk.ToolCallStatusPending),
		Content: []sdk.ToolCallContent{
			// The editor shows the options as buttons, so the text names
			// them as a page does, never the terminal's keys.
			sdk.ToolContent(sdk.TextBlock(q.Plain())),
		},
	}
	if id == "" {
		id = fmt.Sprintf("ralph-question-%d", questionSeq.Add(1))
		call.Kind = new(sdk.ToolKindOther)
	}
	call.ToolCallId = sdk.ToolCallId(id)
	opts := []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, Name: approval.ButtonYes, OptionId: optionYes}}
	if q.CanAlways() {
		opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowAlways, Name: approval.ButtonAlways, OptionId: optionAlways})
	}
	if q.CanShare() {
		opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowAlways, Name: approval.ButtonProject + " (shared through git)", OptionId: optionShare})
	}
	opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindRejectOnce, Name: approval.ButtonNo, OptionId: optionNo})
	resp, err := ss.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), ToolCall: call, Options: opts})
	if err != nil || resp.Outcome.Selected == nil {
		// Cancelled, failed, or the client went away: no.
		return approval.No, nil
	}
	switch string(resp.Outcome.Selected.OptionId) {
	case optionYes:
		return approval.Yes, nil
	case optionAlways:
		if q.CanAlways() {
			return approval.Always, nil
		}
	case optionShare:
		if q.CanShare() {
			return approval.Share, nil
		}
	}
	return approval.No, nil
}

// confirm asks the person a yes/no question that is about no tool call
// (a slash command's: /init over an existing AGENTS.md) as a permission
// request; anything but Yes is no.
func (ss *session) confirm(ctx context.Context, question string) bool {
	ss.out.flush()
	id := fmt.Sprintf("ralph-question-%d", questionSeq.Add(1))
	call := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Title: &question, Kind: new(sdk.ToolKindOther), Status: new(sdk.ToolCallStatusPending)}
	opts := []sdk.PermissionOption{
		{Kind: sdk.PermissionOptionKindAllowOnce, Name: approval.ButtonYes, OptionId: optionYes},
		{Kind: sdk.PermissionOptionKindRejectOnce, Name: approval.ButtonNo, OptionId: optionNo},
	}
	resp, err := ss.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), ToolCall: call, Options: opts})
	return err == nil && resp.Outcome.Selected != nil && string(resp.Outcome.Selected.OptionId) == optionYes
}
