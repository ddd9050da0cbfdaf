package approval

import (
	"context"

	"github.com/ralph-dev/ralph/workers/tools"
)

// The approval's side of the permission hooks (PermissionRequest,
// PermissionDenied; the tool door fires them, workers/tools/permhooks.go).

// hookDenied fires PermissionRequest where the policy needs a person's
// answer about the call ctx carries, before it asks (or refuses for
// want of anyone to ask): a hook's deny refuses the call without asking.
// A hook's allow answers nothing, as no hook's allow does in ralph: the
// person is still asked, and what the policy refuses stays refused.
func hookDenied(ctx context.Context) (tools.Decision, bool) {
	denied, reason := tools.PermissionRequest(ctx)
	if !denied {
		return tools.Decision{}, false
	}
	return tools.Decision{Reason: "a PermissionRequest hook refused this call: " + reason}, true
}

// refusal passes d on, telling the tool door when it refuses the call
// (PermissionDenied fires for it); a call cancelled by a stop was not
// refused.
func refusal(ctx context.Context, d tools.Decision) tools.Decision {
	if !d.Allowed && ctx.Err() == nil {
		tools.Refused(ctx, d.Reason)
	}
	return d
}
