package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// geminiAPI is Google's Gemini API (POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse), as Gemini CLI calls it with
// GOOGLE_GEMINI_BASE_URL pointing at the server's root. The model and
// whether the answer streams are in the path, not the body. A scripted
// Response becomes one candidate: its Text as text parts, each ToolCall as
// a functionCall part (arguments as the args object, whole: Gemini never
// splits a call across chunks). Streaming sends each text chunk as a
// GenerateContentResponse of its own, then the function calls, then a last
// one with the finish reason and usageMetadata; each as "data: <json>"
// without an event name, which the SDK's parser does not accept.
type geminiAPI struct{}

// geminiPrefix is where the API's paths start; the routes are registered
// with it and the model follows it up to the colon.
const geminiPrefix = "/v1beta/models/"

// authorized accepts the key as Google's SDK sends it (x-goog-api-key),
// or as the key query parameter of the REST examples.
func (geminiAPI) authorized(r *http.Request, key string) bool {
	return r.Header.Get("X-Goog-Api-Key") == key || r.URL.Query().Get("key") == key
}

// requestOf reads the model and the method from the path.
func (geminiAPI) requestOf(r *http.Request) (model string, stream bool) {
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, geminiPrefix), ":")
	return model, method == "streamGenerateContent"
}

// errorBody is Google's error shape: the code, the message and the
// status in gRPC's words.
func (geminiAPI) errorBody(status int, message string) string {
	name := map[int]string{
		http.StatusBadRequest:          "INVALID_ARGUMENT",
		http.StatusUnauthorized:        "UNAUTHENTICATED",
		http.StatusForbidden:           "PERMISSION_DENIED",
		http.StatusNotFound:            "NOT_FOUND",
		http.StatusTooManyRequests:     "RESOURCE_EXHAUSTED",
		http.StatusServiceUnavailable:  "UNAVAILABLE",
		http.StatusGatewayTimeout:      "DEADLINE_EXCEEDED",
		http.StatusInternalServerError: "INTERNAL",
	}[status]
	if name == "" {
		name = "UNKNOWN"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": message, "status": name}})
	return string(b)
}

type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

type geminiCandidate struct {
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
}

type geminiContent struct {
	Parts []geminiPart `json:"parts"`
	Role  string       `json:"role"`
}

type geminiPart struct {
	Text         *string             `json:"text,omitempty"`
	FunctionCall *geminiFunctionCall `json:"functionCall,omitempty"`
}

type geminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type geminiUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

// finishReasonGemini is the finish reason in Gemini's words: a turn that
// calls functions ends with STOP too.
func (rp *reply) finishReasonGemini() string {
	switch rp.finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	case "stop", "tool_calls", "":
		return "STOP"
	}
	return strings.ToUpper(rp.finish)
}

// geminiChunk is one GenerateContentResponse of the reply with parts.
func (rp *reply) geminiChunk(parts []geminiPart, finish string, usage *geminiUsage) geminiResponse {
	if parts == nil {
		parts = []geminiPart{}
	}
	return geminiResponse{
		Candidates:    []geminiCandidate{{Content: geminiContent{Parts: parts, Role: "model"}, FinishReason: finish}},
		UsageMetadata: usage, ModelVersion: rp.model,
		ResponseID: strings.Replace(rp.id, "chatcmpl-fake-", "gemini_fake_", 1),
	}
}

func (rp *reply) geminiUsage() *geminiUsage {
	return &geminiUsage{PromptTokenCount: rp.usage.PromptTokens, CandidatesTokenCount: rp.usage.CompletionTokens,
		TotalTokenCount: rp.usage.TotalTokens}
}

func (rp *reply) geminiCalls() []geminiPart {
	var parts []geminiPart
	for _, tc := range rp.calls {
		parts = append(parts, geminiPart{FunctionCall: &geminiFunctionCall{ID: tc.ID, Name: tc.Name, Args: parsedArguments(tc)}})
	}
	return parts
}

func (geminiAPI) writeMessage(x *exchange, rp *reply) {
	var parts []geminiPart
	if text := joinedText(rp.resp); text != "" || len(rp.calls) == 0 {
		parts = append(parts, geminiPart{Text: &text})
	}
	x.writeBody(rp.resp, rp.geminiChunk(append(parts, rp.geminiCalls()...), rp.finishReasonGemini(), rp.geminiUsage()))
}

func (geminiAPI) writeStream(x *exchange, rp *reply) {
	var body []sseEvent
	for _, c := range textChunks(rp.resp) {
		body = append(body, newEvent("", rp.geminiChunk([]geminiPart{{Text: &c}}, "", nil)))
	}
	if calls := rp.geminiCalls(); len(calls) > 0 {
		body = append(body, newEvent("", rp.geminiChunk(calls, "", nil)))
	}
	empty := ""
	end := []sseEvent{newEvent("", rp.geminiChunk([]geminiPart{{Text: &empty}}, rp.finishReasonGemini(), rp.geminiUsage()))}
	events := scriptedEvents(rp.resp, body, end)
	for i := range events {
		events[i].name = "" // Gemini's stream names no event
	}
	x.writeSSE(rp.resp, events)
}

// handleCountTokens answers countTokens with the four-characters estimate
// of the request body. It is not a model turn: it takes no scripted
// response and is not recorded.
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	writeJSON(w, http.StatusOK, map[string]int{"totalTokens": quarter(len(body))})
}

// handleGemini routes a Gemini API call by the method after the colon.
func (s *Server) handleGemini() http.HandlerFunc {
	generate := s.handleAPI(geminiAPI{})
	return func(w http.ResponseWriter, r *http.Request) {
		_, method, _ := strings.Cut(r.PathValue("call"), ":")
		switch method {
		case "generateContent", "streamGenerateContent":
			generate(w, r)
		case "countTokens":
			s.handleCountTokens(w, r)
		default:
			writeRaw(w, http.StatusNotFound, "application/json",
				geminiAPI{}.errorBody(http.StatusNotFound, "fake model: unknown Gemini method "+method))
		}
	}
}
