package llm

import (
	"encoding/json"
	"regexp"

	openai "github.com/sashabaranov/go-openai"
)

// Fields some OpenAI-compatible servers refuse. Servers with strict request
// schemas answer 400 naming the field they do not know (a pydantic
// "stream_options: Extra inputs are not permitted", "property
// 'stream_options' is unsupported", "messages[2].name: unknown field");
// ralph learns it from that first 400, sends the request again without the
// field, and leaves it out for the rest of the process.
var (
	streamOptionsRe = regexp.MustCompile(`(?i)stream_options`)
	toolNameRe      = regexp.MustCompile(`(?i)(\bname\b.*(not permitted|unsupported|unknown|not allowed|unexpected|unrecognized))|((unknown|unexpected|unrecognized|extra)[^.]*\bname\b)|messages\.\d+\.name|messages\[\d+\]\.name`)
)

// learn reports whether f is a 400 about a field this client can leave
// out, and leaves it out from now on.
func (c *Client) learn(req Request, f *failure) bool {
	if f.status != 400 {
		return false
	}
	msg := f.server.message
	switch {
	case !c.noStreamOptions.Load() && streamOptionsRe.MatchString(msg):
		c.noStreamOptions.Store(true)
		return true
	case !c.noToolName.Load() && hasToolName(req) && toolNameRe.MatchString(msg) && !modelRe.MatchString(msg):
		c.noToolName.Store(true)
		return true
	}
	return false
}

func hasToolName(req Request) bool {
	for _, m := range req.Messages {
		if m.Role == "tool" && m.Name != "" {
			return true
		}
	}
	return false
}

// toOpenAI builds the wire request, without the fields this endpoint has
// refused.
func (c *Client) toOpenAI(req Request) openai.ChatCompletionRequest {
	o := openai.ChatCompletionRequest{Model: req.Model, Stream: true}
	if !c.noStreamOptions.Load() {
		o.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	dropName := c.noToolName.Load()
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if dropName && m.Role == "tool" {
			om.Name = ""
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		o.Messages = append(o.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		o.Tools = append(o.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return o
}
