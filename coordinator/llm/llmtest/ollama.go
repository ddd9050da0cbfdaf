package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Ollama's native API beside /v1, as much of it as a client asks to learn
// the context a model is served with (ollama/ollama docs/api.md):
//
//   - GET /api/ps lists the loaded models, each with the "context_length"
//     it was loaded with; a model is loaded by its first request.
//   - POST /api/show {"model":…} gives the model's "parameters" (a
//     Modelfile's PARAMETER lines: num_ctx only when set), and its
//     "model_info", where "<arch>.context_length" is the model's own
//     window, not what the server serves.
//
// Every flavor counts these requests (APIRequests), so a test can show
// that ralph asks only servers that look like Ollama; any flavor but
// ollama answers them as paths outside its API.

const (
	ollamaFingerprint    = "fp_ollama"
	ollamaDefaultNumCtx  = 4096
	ollamaModelWindow    = 32768
	ollamaArchitecture   = "qwen2"
	ollamaDefaultVariant = ":latest"
)

func (s *Server) isOllama() bool {
	return s.scenario != nil && strings.EqualFold(s.scenario.Flavor, "ollama")
}

// numCtx is the context the ollama flavor serves.
func (s *Server) numCtx() int {
	if s.scenario != nil && s.scenario.NumCtx > 0 {
		return s.scenario.NumCtx
	}
	return ollamaDefaultNumCtx
}

// APIRequests counts requests to Ollama's native API path (for example
// "/api/ps"), whatever the flavor.
func (s *Server) APIRequests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apiHits[path]
}

func (s *Server) countAPI(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiHits == nil {
		s.apiHits = map[string]int{}
	}
	s.apiHits[path]++
}

// hangs holds a native API request until the client goes away, when the
// scenario says the API hangs.
func (s *Server) hangs(r *http.Request) bool {
	if !s.isOllama() || !s.scenario.APIHang {
		return false
	}
	// The server notices the client going away only once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
	return true
}

// ollamaAnswers counts a call of Ollama's own API and reports whether
// the server answers it: a server of another flavor answers as that
// flavor does outside its API, and a scenario's hang holds it.
func (s *Server) ollamaAnswers(w http.ResponseWriter, r *http.Request) bool {
	s.countAPI(r.URL.Path)
	if !s.isOllama() {
		s.flavor().outside(w, r)
		return false
	}
	return !s.hangs(r)
}

func (s *Server) handlePS(w http.ResponseWriter, r *http.Request) {
	if !s.ollamaAnswers(w, r) {
		return
	}
	type running struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		Size          int64  `json:"size"`
		ContextLength int    `json:"context_length"`
	}
	list := struct {
		Models []running `json:"models"`
	}{Models: []running{}}
	if s.loaded.Load() {
		name := s.models[0]
		if m, _ := s.loadedModel.Load().(string); m != "" {
			name = m
		}
		name = strings.TrimSuffix(name, ollamaDefaultVariant) + ollamaDefaultVariant
		list.Models = append(list.Models, running{Name: name, Model: name, Size: 1 << 30, ContextLength: s.numCtx()})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleShow(w http.ResponseWriter, r *http.Request) {
	if !s.ollamaAnswers(w, r) {
		return
	}
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // the older spelling
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model+req.Name == "" {
		writeRaw(w, http.StatusBadRequest, "application/json", `{"error":"model is required"}`)
		return
	}
	model := req.Model + req.Name
	if sc := s.scenario; sc.Model != "" && model != sc.Model && model != sc.Model+ollamaDefaultVariant {
		b, _ := json.Marshal(map[string]string{"error": "model '" + model + "' not found"})
		writeRaw(w, http.StatusNotFound, "application/json", string(b))
		return
	}
	params := "stop                           \"<|im_end|>\""
	if s.scenario.NumCtxModelfile {
		params = fmt.Sprintf("num_ctx                        %d\n", s.numCtx()) + params
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"modelfile":  "FROM " + model,
		"parameters": params,
		"template":   "{{ .Prompt }}",
		"details":    map[string]any{"format": "gguf", "family": ollamaArchitecture},
		"model_info": map[string]any{
			"general.architecture":                 ollamaArchitecture,
			ollamaArchitecture + ".context_length": ollamaModelWindow,
		},
		"capabilities": []string{"completion", "tools"},
	})
}
