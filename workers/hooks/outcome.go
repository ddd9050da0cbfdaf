package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is a PreToolUse hook's permission decision.
type Decision string

// The permission decisions, weakest first: Combine keeps the strongest.
const (
	NoDecision Decision = ""
	Allow      Decision = "allow"
	Ask        Decision = "ask"
	Deny       Decision = "deny"
)

func (d Decision) rank() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// Outcome is what one hook answered.
type Outcome struct {
	Hook     Hook
	ExitCode int // -1 when it did not exit by itself
	TimedOut bool
	// Err is set when the hook could not start or ralph stopped it.
	Err            error
	Stdout, Stderr string

	// Block is exit status 2, or "decision": "block" on exit 0; Reason
	// is stderr, or the JSON's reason. What blocking means depends on
	// the event (the caller's): the call is refused (PreToolUse), the
	// model is told (PostToolUse), the prompt is dropped
	// (UserPromptSubmit), the agent keeps working (Stop).
	Block  bool
	Reason string
	// Decision and DecisionReason are hookSpecificOutput's
	// permissionDecision and permissionDecisionReason (or the older
	// "decision": "approve" or "block" of PreToolUse).
	Decision       Decision
	DecisionReason string
	UpdatedInput   map[string]any
	// AdditionalContext is hookSpecificOutput.additionalContext, or the
	// plain stdout of a UserPromptSubmit or SessionStart hook, which
	// Claude Code adds to the context too.
	AdditionalContext string
	// StopAll is "continue": false: ralph stops, saying StopReason.
	StopAll       bool
	StopReason    string
	SystemMessage string
	// SuppressOutput asks that the hook's stdout not be shown in the
	// transcript.
	SuppressOutput bool
	// Problem is a non-blocking error to tell the person: an exit status
	// other than 0 and 2, stdout that looks like JSON but is not, a
	// timeout.
	Problem string
	// Retry is a PermissionDenied hook's hookSpecificOutput.retry: the
	// model is told it may try the call again.
	Retry bool
	// Kept says that the sandbox kept the hook from writing outside the
	// project (the path its error names), so that a hook whose writes
	// come to nothing is never silent about it.
	Kept string
}

// output is the JSON a hook may print on exit 0.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       struct {
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any `json:"updatedInput"`
		AdditionalContext        string         `json:"additionalContext"`
		// Decision is a PermissionRequest hook's answer to the
		// question the person is about to be asked.
		Decision *struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"decision"`
		Retry bool `json:"retry"`
	} `json:"hookSpecificOutput"`
}

// read fills in the answer from the exit status and output: JSON on
// stdout is read only on exit 0, as in Claude Code.
func (o *Outcome) read() {
	h := o.Hook
	switch o.ExitCode {
	case 0:
	case 2:
		o.Block = true
		o.Reason = strings.TrimSpace(o.Stderr)
		if o.Reason == "" {
			o.Reason = fmt.Sprintf("blocked by the %s hook %q", h.Event, h.Command)
		}
		if h.Event == PreToolUse || h.Event == PermissionRequest {
			o.Decision, o.DecisionReason = Deny, o.Reason
		}
		return
	case -1:
		o.Problem = fmt.Sprintf("%s hook %q (%s) was killed%s", h.Event, h.Command, h.Source, firstLine(o.Stderr))
		return
	default:
		o.Problem = fmt.Sprintf("%s hook %q (%s) exited with status %d%s", h.Event, h.Command, h.Source, o.ExitCode, firstLine(o.Stderr))
		return
	}
	text := strings.TrimSpace(o.Stdout)
	if !strings.HasPrefix(text, "{") {
		if text != "" && (h.Event == UserPromptSubmit || h.Event == SessionStart) {
			o.AdditionalContext = text
		}
		return
	}
	var js output
	if err := json.Unmarshal([]byte(text), &js); err != nil {
		o.Problem = fmt.Sprintf("%s hook %q (%s) printed JSON ralph cannot read: %v", h.Event, h.Command, h.Source, err)
		return
	}
	if js.Continue != nil && !*js.Continue {
		o.StopAll, o.StopReason = true, js.StopReason
	}
	o.SystemMessage, o.SuppressOutput = js.SystemMessage, js.SuppressOutput
	o.Reason = js.Reason
	switch js.Decision {
	case "block":
		o.Block = true
		if h.Event == PreToolUse {
			o.Decision, o.DecisionReason = Deny, js.Reason
		}
	case "approve":
		if h.Event == PreToolUse {
			o.Decision, o.DecisionReason = Allow, js.Reason
		}
	}
	sp := js.Specific
	switch d := Decision(sp.PermissionDecision); d {
	case Allow, Ask, Deny:
		if h.Event == PreToolUse {
			o.Decision, o.DecisionReason = d, sp.PermissionDecisionReason
			o.Block = d == Deny
			if o.Block {
				o.Reason = sp.PermissionDecisionReason
			}
		}
	case NoDecision:
	default:
		o.Problem = fmt.Sprintf("%s hook %q (%s) answered permissionDecision %q, which is none of allow, deny, ask", h.Event, h.Command, h.Source, d)
	}
	if d := sp.Decision; d != nil && h.Event == PermissionRequest {
		switch Decision(d.Behavior) {
		case Allow, Deny:
			o.Decision, o.DecisionReason = Decision(d.Behavior), d.Message
		default:
			o.Problem = fmt.Sprintf("%s hook %q (%s) answered decision.behavior %q, which is neither allow nor deny", h.Event, h.Command, h.Source, d.Behavior)
		}
	}
	o.Retry = sp.Retry && h.Event == PermissionDenied
	o.UpdatedInput = sp.UpdatedInput
	o.AdditionalContext = sp.AdditionalContext
}

// firstLine is the first line of stderr, as ": line", or "".
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	line, _, _ := strings.Cut(s, "\n")
	return ": " + line
}

// Result is the hooks of one event, combined.
type Result struct {
	Event    Event
	Outcomes []Outcome
	// Decision is the strongest permission decision (deny over ask over
	// allow), with the reasons of the hooks that gave it.
	Decision       Decision
	DecisionReason string
	// Block is set when a hook blocked; BlockReason joins their reasons.
	Block       bool
	BlockReason string
	// UpdatedInput is the last updatedInput of a hook that did not deny
	// (the caller maps it back to ralph's tool, and it still goes through
	// the confined writer and the approval).
	UpdatedInput map[string]any
	// AdditionalContext joins the hooks' context for the model.
	AdditionalContext string
	// StopAll is set when a hook said "continue": false.
	StopAll        bool
	StopReason     string
	SystemMessages []string
	// Errors are the non-blocking problems, each said once per Runner.
	Errors []string
	// Retry is set when a PermissionDenied hook said the model may retry.
	Retry bool
}

// combine puts the outcomes of one event's hooks together.
func combine(event Event, outs []Outcome) Result {
	res := Result{Event: event, Outcomes: outs}
	var reasons, blocks, contexts, stops []string
	for _, o := range outs {
		switch {
		case o.TimedOut:
			res.Errors = append(res.Errors, fmt.Sprintf("%s hook %q (%s) ran past its %s timeout and was killed", event, o.Hook.Command, o.Hook.Source, o.Hook.Timeout))
		case o.Err != nil:
			res.Errors = append(res.Errors, fmt.Sprintf("%s hook %q (%s) did not finish: %v", event, o.Hook.Command, o.Hook.Source, o.Err))
		case o.Problem != "":
			res.Errors = append(res.Errors, o.Problem)
		}
		if o.Kept != "" {
			res.Errors = append(res.Errors, o.Kept)
		}
		if o.Decision.rank() > res.Decision.rank() {
			res.Decision, reasons = o.Decision, nil
		}
		if o.Decision != NoDecision && o.Decision == res.Decision && o.DecisionReason != "" {
			reasons = append(reasons, o.DecisionReason)
		}
		if o.Block {
			res.Block = true
			if o.Reason != "" {
				blocks = append(blocks, o.Reason)
			}
		}
		if o.UpdatedInput != nil && o.Decision != Deny {
			res.UpdatedInput = o.UpdatedInput
		}
		if o.AdditionalContext != "" {
			contexts = append(contexts, o.AdditionalContext)
		}
		if o.StopAll {
			res.StopAll = true
			if o.StopReason != "" {
				stops = append(stops, o.StopReason)
			}
		}
		res.Retry = res.Retry || o.Retry
		if o.SystemMessage != "" {
			res.SystemMessages = append(res.SystemMessages, o.SystemMessage)
		}
	}
	res.DecisionReason = strings.Join(reasons, "\n")
	res.BlockReason = strings.Join(blocks, "\n")
	res.AdditionalContext = strings.Join(contexts, "\n")
	res.StopReason = strings.Join(stops, "\n")
	if res.Decision == Deny {
		res.UpdatedInput = nil
	}
	return res
}
