package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
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
	return c.wire.models(ctx, c)
}

// chatModels is Models for OpenAI's chat completions: GET {base}/models.
func (c *Client) chatModels(ctx context.Context) ([]ServedModel, error) {
	url := c.cfg.BaseURL + "/models"
	body, err := c.list(ctx, url, "GET /models")
	if err != nil {
		return nil, err
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
		return nil, c.notAList(ctx, "GET /models", err)
	}
	out := make([]ServedModel, 0, len(list.Data))
	for _, m := range list.Data {
		out = append(out, ServedModel{ID: m.ID, ContextLength: max(m.ContextLength, m.MaxModelLen, m.MaxContextLength)})
	}
	return listed(out), nil
}

// listed is a model list as ralph passes it on, sorted by id. An id
// holding a control character or an escape sequence is left out: no
// model is called so, and the list goes to terminals (`ralph models`,
// Tab after /model, doctor), where the endpoint's text must not act.
func listed(out []ServedModel) []ServedModel {
	out = slices.DeleteFunc(out, func(m ServedModel) bool { return m.ID == "" || text.StripControls(m.ID) != m.ID })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// list asks the endpoint for a model list at u (what names the request
// in sentences) and returns the answer's body, or the error a person
// reads: the key refused, a base URL that is not the API, a server out
// of reach, each naming the variable to fix.
func (c *Client) list(ctx context.Context, u, what string) ([]byte, error) {
	resp, err := c.wire.get(ctx, c, u)
	if err != nil {
		return nil, &Error{Kind: ErrBadRequest, Config: true, Err: err,
			Msg: fmt.Sprintf("cannot reach %s: %s; check that the server runs and --base-url (or %s)", c.cfg.BaseURL, rootCause(err), c.baseURLEnv())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", u, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := "the key's variable"
		if c.wire.surelyKey() || c.cfg.KeyEnv != "" {
			hint = c.keyEnv()
		}
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode, Config: true,
			Msg: fmt.Sprintf("%s refused the API key (HTTP %d: %s); check %s, or that it belongs to this endpoint", c.cfg.BaseURL, resp.StatusCode, parseErrorBody(body).describe(), hint)}
	case resp.StatusCode == http.StatusNotFound:
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode, Config: true,
			Msg: c.notAPISentence(ctx, what+" answered 404")}
	case resp.StatusCode != http.StatusOK:
		return nil, &Error{Kind: ErrBadRequest, Status: resp.StatusCode,
			Msg: fmt.Sprintf("%s answered %s with HTTP %d: %s", c.cfg.BaseURL, what, resp.StatusCode, parseErrorBody(body).describe())}
	}
	return body, nil
}

// notAList is the error of a model list that did not decode.
func (c *Client) notAList(ctx context.Context, what string, err error) error {
	return &Error{Kind: ErrBadRequest, Config: true, Err: err, Msg: c.notAPISentence(ctx, what+" did not answer with a model list")}
}

// notAPISentence explains a base URL that leads to no API of this
// client's protocol.
func (c *Client) notAPISentence(ctx context.Context, where string) string {
	return c.wire.notAPI(ctx, c, where)
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
