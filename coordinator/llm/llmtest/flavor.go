package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ralph-dev/ralph/memory/providers"
)

// Fields a scenario's server may refuse (Scenario.Refuse).
const (
	refuseStreamOptions = "stream_options"
	refuseToolName      = "tool_name"
)

// flavor is how one real server answers where servers differ. Each is
// written after what that server really sends (the issue threads and
// sources cited), so that ralph's error table is tested against the real
// shapes rather than against OpenAI's alone.
type flavor struct {
	// outside answers a request for a path the API does not serve, as
	// when a base URL lacks /v1.
	outside func(w http.ResponseWriter, r *http.Request)
	// modelNotFound and noTools are the status and body of those errors.
	modelNotFound func(model string) (int, string)
	noTools       func(model string) (int, string)
}

var flavors = map[string]flavor{
	"":         openaiFlavor,
	"openai":   openaiFlavor,
	"ollama":   ollamaFlavor,
	"lmstudio": lmstudioFlavor,
	"vllm":     vllmFlavor,
}

// OpenAI: 404 with an error object for unknown paths and models. OpenAI
// itself serves only models with tools; a model without them is met
// through OpenRouter, which answers 404 "No endpoints found that support
// tool use" with a numeric code.
var openaiFlavor = flavor{
	outside: func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusNotFound, "application/json",
			errorBody(fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", ""))
	},
	modelNotFound: func(model string) (int, string) {
		return http.StatusNotFound, errorBody(fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model), "invalid_request_error", "model_not_found")
	},
	noTools: func(string) (int, string) {
		return http.StatusNotFound, `{"error":{"code":404,"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://` +
			routerHost() + `/docs/provider-routing"}}`
	},
}

// responsesOnlyBody is OpenAI's answer to a chat completions request for a
// model it serves only on the Responses API, HTTP 404, byte for byte as
// reported (alvinunreal/tmuxai#82; the status in docker/docker-agent#313
// and aaif-goose/goose#2564, for gpt-5-codex, codex-mini-latest and
// o3-pro).
const responsesOnlyBody = `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}`

// refusesResponsesOnly reports whether a chat completions request for
// model is refused because OpenAI serves the model only on the Responses
// API: in the openai flavor (a server without a scenario is OpenAI),
// unless the scenario's server translates, as a router does.
func (s *Server) refusesResponsesOnly(model string) bool {
	if sc := s.scenario; sc != nil && (sc.Translates || strings.ToLower(sc.Flavor) != "" && strings.ToLower(sc.Flavor) != "openai") {
		return false
	}
	return providers.ResponsesOnly(model)
}

// Ollama: its root answers "Ollama is running" and every other path
// outside its APIs gin's plain "404 page not found", so a base URL
// without /v1 meets a 404 that is not JSON. Its /v1 layer wraps errors as
// {"error":{"message":…,"type":"api_error","param":null,"code":null}}
// (ollama/ollama#5793, #6027); a model whose template has no tools is
// refused with HTTP 400 "registry.ollama.ai/library/<model> does not
// support tools" (ollama/ollama#14795).
var ollamaFlavor = flavor{
	outside: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			writeRaw(w, http.StatusOK, "text/plain; charset=utf-8", "Ollama is running")
			return
		}
		writeRaw(w, http.StatusNotFound, "text/plain", "404 page not found")
	},
	modelNotFound: func(model string) (int, string) {
		return http.StatusNotFound, ollamaError(fmt.Sprintf("model %q not found, try pulling it first", model))
	},
	noTools: func(model string) (int, string) {
		return http.StatusBadRequest, ollamaError("registry.ollama.ai/library/" + model + " does not support tools")
	},
}

// LM Studio: any path it does not serve gets HTTP 200 with a string-form
// error, "Unexpected endpoint or method. (POST /chat/completions)"
// (lmstudio-ai/lmstudio-bug-tracker#618; its log says "Returning 200
// anyway").
var lmstudioFlavor = flavor{
	outside: func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("Unexpected endpoint or method. (%s %s)", r.Method, r.URL.Path)})
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", string(b))
	},
	modelNotFound: openaiFlavor.modelNotFound,
	noTools:       ollamaFlavor.noTools,
}

// vLLM: FastAPI's {"detail":"Not Found"} for unknown paths, and errors as
// a top-level {"object":"error","message":…,"type":…,"code":N}. Without
// --enable-auto-tool-choice it refuses tools with HTTP 400.
var vllmFlavor = flavor{
	outside: func(w http.ResponseWriter, _ *http.Request) {
		writeRaw(w, http.StatusNotFound, "application/json", `{"detail":"Not Found"}`)
	},
	modelNotFound: func(model string) (int, string) {
		return http.StatusNotFound, vllmError(fmt.Sprintf("The model `%s` does not exist.", model), "NotFoundError", 404)
	},
	noTools: func(string) (int, string) {
		return http.StatusBadRequest, vllmError(`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, "BadRequestError", 400)
	},
}

func ollamaError(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "api_error", "param": nil, "code": nil}})
	return string(b)
}

func vllmError(msg, typ string, code int) string {
	b, _ := json.Marshal(map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": code})
	return string(b)
}

// refusal is the 400 a strict request schema gives for a field it does not
// know: pydantic's extra_forbidden, as FastAPI-based servers word it.
func refusal(field string) string {
	return vllmError(fmt.Sprintf("[{'type': 'extra_forbidden', 'loc': ('body', %s), 'msg': 'Extra inputs are not permitted'}]", field), "BadRequestError", 400)
}

// refused reports the first field of req the scenario's server refuses.
func (sc *Scenario) refused(req *RecordedRequest) string {
	for _, f := range sc.Refuse {
		switch f {
		case refuseStreamOptions:
			if req.Request.StreamOptions != nil {
				return "'stream_options'"
			}
		case refuseToolName:
			for i, m := range req.Request.Messages {
				if m.Role == "tool" && m.Name != "" {
					return fmt.Sprintf("'messages', %d, 'name'", i)
				}
			}
		}
	}
	return ""
}

func writeRaw(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// flavor is the scenario's flavor; a server without a scenario is OpenAI.
func (s *Server) flavor() flavor {
	if s.scenario == nil {
		return openaiFlavor
	}
	return flavors[strings.ToLower(s.scenario.Flavor)]
}

// routerHost is OpenRouter's host, as the provider table has it: its
// refusal above links to its documentation there.
func routerHost() string {
	p, _ := providers.Named("openrouter")
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return ""
	}
	return u.Host
}
