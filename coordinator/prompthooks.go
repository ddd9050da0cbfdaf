package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// askPromptHook sends a prompt hook's request (workers/hooks/prompt.go)
// beside the conversation: to the model the hook names, mapped as an
// agent definition's is (Claude Code's aliases to the provider's model
// of that family), or the session's. What it used is the session's, as
// a summary's is (spentBeside), so it shows in /cost and ralph status
// and counts against --max-cost; the request and its answer are a
// decision in decisions.jsonl. The request carries no tools: the model
// answers in words, and a prompt hook cannot act.
func (c *Coordinator) askPromptHook(ctx context.Context, req hooks.PromptRequest) (string, error) {
	model, note := c.promptHookModel(req.Model)
	resp, err := c.opts.Model.Stream(ctx, llm.Request{Model: model, Messages: []conversation.Message{
		{Role: conversation.RoleSystem, Content: req.System},
		{Role: conversation.RoleUser, Content: req.User},
	}, NoWebSearch: true}, nil)
	c.spentBeside(resp.Usage)
	h := req.Hook
	d := memory.DecisionRecord{Kind: "prompt_hook",
		Detail: fmt.Sprintf("the %s prompt hook of %s asked model %s%s", h.Event, text.Visible(h.File), model, note),
		Reason: "a prompt hook is answered by a model (docs/hooks.md#prompt-hooks)"}
	if err != nil {
		d.Detail += ", which failed: " + text.OneLine(err.Error())
		c.logDecision(d)
		return "", fmt.Errorf("asking model %s: %w", model, err)
	}
	d.Detail += fmt.Sprintf(" (%s in, %s out); it answered %s", text.Counted(resp.Usage.InputTokens, "token", "tokens"),
		text.Counted(resp.Usage.OutputTokens, "token", "tokens"), text.OneLine(text.Clip(resp.Message.Content, 300)))
	c.logDecision(d)
	return resp.Message.Content, nil
}

// promptHookModel is the model a prompt hook's request goes to, and a
// note when it is not the one the hook names.
func (c *Coordinator) promptHookModel(named string) (string, string) {
	session := c.ModelName()
	id, err := agentdefs.ModelID(named)
	switch {
	case errors.Is(err, agentdefs.ErrAlias):
		if p, ok := c.opts.Model.(interface{ Provider() string }); ok {
			if m, ok := providers.ModelForAlias(p.Provider(), named); ok {
				return m, ""
			}
		}
		return session, fmt.Sprintf(" (the session's: the hook's %q names no model of this provider)", text.OneLine(named))
	case err != nil:
		return session, fmt.Sprintf(" (the session's: the hook's model %q is no model name)", text.OneLine(named))
	case id == "":
		return session, ""
	}
	return id, ""
}
