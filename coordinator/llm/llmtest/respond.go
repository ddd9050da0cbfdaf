package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// reply carries what every generated chunk or completion repeats.
type reply struct {
	id      string
	created int64
	model   string
	resp    Response   // as scripted; use calls for the tool calls
	usage   wireUsage  // effective token counts
	finish  string     // effective finish reason
	calls   []ToolCall // resp.ToolCalls with default ids, as function calls
	// typed are the same calls as scripted, custom and local shell calls
	// kept as such, for the Responses API.
	typed  []ToolCall
	ollama bool // answer as Ollama's /v1 layer does
}

// respond plays one scripted response, recording whether the client went
// away before it finished.
func (x *exchange) respond(resp Response) {
	for k, v := range resp.Headers {
		x.w.Header().Set(k, v)
	}
	if !sleepCtx(x.r.Context(), time.Duration(resp.DelayMS)*time.Millisecond) {
		x.settle(true)
		return
	}
	if resp.Replay != "" {
		x.replay(resp)
		return
	}
	if resp.RateLimit != nil {
		x.settle(false)
		model := x.rec.Request.Model
		if model == "" {
			model = x.s.models[0]
		}
		rl := *resp.RateLimit
		if _, ok := x.api.(messagesAPI); ok && rl.Shape == "" {
			rl.Shape = "anthropic"
		}
		writeRateLimit(x.w, rl, model, x.rec.Received)
		return
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		x.settle(false)
		if resp.Body == "" && !resp.EmptyBody {
			resp.Body = x.errorBody(resp)
		}
		writeScriptedError(x.w, resp)
		return
	}
	if x.msg != nil {
		resp = x.msg.forced(resp)
	}
	rp := x.s.newReply(&x.rec, resp)
	if f := resp.Failure; f != nil && resp.StreamError == "" {
		switch x.api.(type) {
		case nil:
			rp.resp.StreamError = chatFailure(f)
		case messagesAPI:
			rp.resp.StreamError = messagesFailure(f)
		}
	}
	switch {
	case resp.Usage != nil:
		rp.usage.cacheRead, rp.usage.cacheWrite = resp.Usage.CacheReadTokens, resp.Usage.CacheWriteTokens
	case x.cache != nil:
		rp.usage.cacheRead, rp.usage.cacheWrite = x.cache.read, x.cache.write
	}
	if rp.usage.cacheRead > 0 && x.api == nil {
		rp.usage.PromptTokensDetails = &promptBreakdown{CachedTokens: rp.usage.cacheRead}
	}
	switch {
	case x.api != nil && x.rec.Request.Stream:
		x.api.writeStream(x, rp)
		return
	case x.api != nil:
		x.api.writeMessage(x, rp)
		return
	}
	if x.rec.Request.Stream {
		x.writeStream(rp)
		return
	}
	x.writeCompletion(rp)
}

// errorBody is the body of a scripted error without one: the response's
// Message (or a default) in the API's own shape.
func (x *exchange) errorBody(resp Response) string {
	if x.api == nil {
		if resp.Message == "" {
			return errorBody(fmt.Sprintf("fake error %d", resp.Status), "server_error", "")
		}
		typ := "server_error"
		if resp.Status < 500 {
			typ = "invalid_request_error"
		}
		return errorBody(resp.Message, typ, "")
	}
	msg := resp.Message
	if msg == "" {
		msg = fmt.Sprintf("fake error %d", resp.Status)
		if d, ok := x.api.(interface{ defaultError(int) string }); ok {
			msg = d.defaultError(resp.Status)
		}
	}
	return x.api.errorBody(resp.Status, msg)
}

// newReply fills in the defaults of a response for one request. It copies
// the tool calls so that the shared scenario is never mutated.
func (s *Server) newReply(rec *RecordedRequest, resp Response) *reply {
	model := rec.Request.Model
	if model == "" {
		model = s.models[0]
	}
	rp := &reply{
		id:      fmt.Sprintf("chatcmpl-fake-%d", rec.Index+1),
		created: rec.Received.Unix(),
		model:   model,
		resp:    resp,
		finish:  resp.FinishReason,
		ollama:  s.isOllama(),
	}
	rp.calls = make([]ToolCall, len(resp.ToolCalls))
	rp.typed = make([]ToolCall, len(resp.ToolCalls))
	outChars := utf8.RuneCountInString(joinedText(resp))
	for i, tc := range resp.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", s.callSeq.Add(1))
		}
		rp.typed[i] = tc
		rp.calls[i] = tc.asFunction()
		outChars += utf8.RuneCountInString(tc.Name) + utf8.RuneCountInString(tc.fullArguments())
	}
	if rp.finish == "" {
		rp.finish = "stop"
		if len(rp.calls) > 0 {
			rp.finish = "tool_calls"
		}
	}
	if resp.Usage != nil {
		rp.usage = wireUsage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}
	} else {
		rp.usage = wireUsage{PromptTokens: quarter(len(rec.Body)), CompletionTokens: quarter(outChars)}
	}
	if resp.Reasoning != "" {
		n := quarter(utf8.RuneCountInString(resp.Reasoning))
		rp.usage.CompletionTokens += n
		rp.usage.CompletionTokensDetails = &tokenBreakdown{ReasoningTokens: n}
	}
	if rp.ollama {
		// Ollama cuts a prompt longer than the context it serves and
		// reports the tokens it kept.
		rp.usage.PromptTokens = min(rp.usage.PromptTokens, s.numCtx())
	}
	rp.usage.TotalTokens = rp.usage.PromptTokens + rp.usage.CompletionTokens
	return rp
}

// chatFailure is a Failure as chat completions reports one in its stream:
// a data line with OpenAI's error object.
func chatFailure(f *Failure) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": f.Message, "type": "server_error", "param": nil, "code": f.Code}})
	return string(b)
}

// messagesFailure is a Failure as the Messages API reports one in its
// stream: an error event whose type matches the code.
func messagesFailure(f *Failure) string {
	typ := "api_error"
	switch {
	case strings.Contains(f.Code, "rate_limit"):
		typ = "rate_limit_error"
	case strings.Contains(f.Code, "overloaded"):
		typ = "overloaded_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": f.Message}})
	return string(b)
}

// quarter is the rough "four characters per token" estimate, rounded up so
// that any output costs at least one token.
func quarter(chars int) int {
	return (chars + 3) / 4
}

// sleepCtx waits for d unless ctx ends first, so a scripted delay never
// keeps a handler alive after its client has gone. It reports whether the
// client is still there.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// writeScriptedError sends a scripted HTTP error, defaulting to an
// OpenAI-shaped error body that go-openai turns into an *openai.APIError.
func writeScriptedError(w http.ResponseWriter, resp Response) {
	body := resp.Body
	if body == "" && !resp.EmptyBody {
		body = errorBody(fmt.Sprintf("fake error %d", resp.Status), "server_error", "")
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write([]byte(body))
}

// writeAPIError sends an OpenAI-shaped error produced by the server itself.
func writeAPIError(w http.ResponseWriter, status int, message, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(errorBody(message, typ, code)))
}

func errorBody(message, typ, code string) string {
	type apiError struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
	}
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{apiError{message, typ, code}})
	return string(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, "fake model: "+err.Error(), "server_error", "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
