package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// ServedModel is one model an endpoint lists at GET /models.
type ServedModel struct {
	ID string `json:"id"`
	// ContextLength is the window the server says it serves the model
	// with, when its listing carries one (OpenRouter's context_length,
	// vLLM's max_model_len, LM Studio's max_context_length); 0 otherwise.
	ContextLength int `json:"context_length,omitempty"`
}

// listTimeout bounds `ralph doctor`'s and `ralph models`' questions to the
// endpoint: a server that has not answered by then would stall a run too.
const listTimeout = 15 * time.Second

// Models asks the endpoint which models it serves (GET /models), sorted
// by id. Its error is one sentence for a person saying what to fix: the
// key refused, a base URL that is not the API, a server out of reach.
func (c *Client) Models(ctx context.Context) ([]ServedModel, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	if c.messages() {
		return c.messagesModels(ctx)
	}
	url := c.cfg.BaseURL + "/models"
	resp, err := c.sideRequest(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{Kind: ErrBadRequest, Config: true, Err: err,
			Msg: fmt.Sprintf("cannot reach %s: %s; check that the server runs and --base-url (or OPENAI_BASE_URL)", c.cfg.BaseURL, rootCause(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode, Config: true,
			Msg: fmt.Sprintf("%s refused the API key (HTTP %d: %s); check the key's variable, or that it belongs to this endpoint", c.cfg.BaseURL, resp.StatusCode, parseErrorBody(body).describe())}
	case resp.StatusCode == http.StatusNotFound:
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode, Config: true,
			Msg: c.notAnAPISentence(ctx, "GET /models answered 404")}
	case resp.StatusCode != http.StatusOK:
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode,
			Msg: fmt.Sprintf("%s answered GET /models with HTTP %d: %s", c.cfg.BaseURL, resp.StatusCode, parseErrorBody(body).describe())}
	}
	var list struct {
		Data []struct {
			ID               string `json:"id"`
			ContextLength    int    `json:"context_length"`
			MaxModelLen      int    `json:"max_model_len"`
			MaxContextLength int    `json:"max_context_length"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, &Error{Kind: ErrBadRequest, Config: true, Err: err,
			Msg: c.notAnAPISentence(ctx, "GET /models did not answer with a model list")}
	}
	out := make([]ServedModel, 0, len(list.Data))
	for _, m := range list.Data {
		out = append(out, ServedModel{ID: m.ID, ContextLength: max(m.ContextLength, m.MaxModelLen, m.MaxContextLength)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// probeTool is the one tool of CheckTools' request: ralph's work is all
// tool calls, so an endpoint or model that refuses tools cannot run it.
var probeTool = conversation.ToolDef{
	Name:        "ping",
	Description: "Answers pong.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
}

// CheckTools makes one tiny request to model with one tool, tried once,
// and returns the error ralph's run would meet: the key refused, the model
// unknown, tools not supported, each as one sentence saying what to fix.
// It costs a few tokens on a paid endpoint.
func (c *Client) CheckTools(ctx context.Context, model string) error {
	cfg := c.cfg
	cfg.MaxAttempts = 1
	cfg.MaxOutputTokens = 16
	cfg.ThinkingTokens = 0 // a word needs no thinking
	probe := New(cfg)
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	_, err := probe.Stream(ctx, Request{
		Model:    model,
		Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "Reply with the word ok."}},
		Tools:    []conversation.ToolDef{probeTool},
	}, nil)
	return err
}
