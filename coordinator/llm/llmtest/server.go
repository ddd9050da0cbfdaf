package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// defaultModel is reported by GET /v1/models and echoed in responses when
// neither the scenario nor the request names a model.
const defaultModel = "fake-model"

// maxBodyBytes bounds a request body; real agent requests are far smaller,
// and the bound keeps a runaway client from exhausting test memory.
const maxBodyBytes = 64 << 20

// RecordedRequest is one model request (chat completions, Messages or
// Responses) as the server saw it, so a test can assert on exactly what
// the client sent and how long it waited.
type RecordedRequest struct {
	// Index counts model requests, of every API, from 0 in arrival
	// order, including ones rejected with 401, 400 or 404.
	Index int
	// Path is the API the request called: /v1/chat/completions,
	// /v1/messages (Anthropic), /v1/responses (OpenAI's Responses) or
	// /v1beta/models/MODEL:streamGenerateContent (Gemini).
	Path   string
	Header http.Header
	Body   []byte // raw JSON body
	// Request is the decoded body of a chat completion request (zero if
	// it did not decode); of the other APIs only Model and Stream.
	Request openai.ChatCompletionRequest
	// Received is when the request arrived; Served is the time from arrival
	// until the handler finished, scripted delays included. It is measured
	// just before the response's final write, so it is already set when the
	// client reads the end of the response; it is zero while the request is
	// still being served.
	Received time.Time
	Served   time.Duration
	// Cancelled is true when the client went away before the response
	// finished.
	Cancelled bool
	// CacheRead and CacheWrite are the prompt tokens a Messages API
	// request was reported to read from and write to the stand-in's
	// prompt cache, CacheRead also a Responses API request's when the
	// scenario simulates its cache (zero for the other APIs and for a
	// refused request).
	CacheRead, CacheWrite int
}

// Server is a scripted fake OpenAI-compatible chat completions server that
// listens on the loopback interface only.
type Server struct {
	// URL is the base URL including /v1, e.g. http://127.0.0.1:41234/v1 —
	// what a client uses as OPENAI_BASE_URL.
	URL string

	scenario *Scenario                        // nil when fn is set
	fn       func(r RecordedRequest) Response // dynamic responses
	models   []string

	httpServer *http.Server
	callSeq    atomic.Int64 // numbers default tool-call ids
	closeOnce  sync.Once

	mu        sync.Mutex
	idle      *sync.Cond // signalled when running drops to zero
	running   int        // all handlers in flight, so Close can wait for them
	active    int        // chat completion handlers in flight
	maxActive int
	next      int // how many scenario responses have been handed out
	requests  []RecordedRequest
	apiHits   map[string]int    // requests to Ollama's native API, by path
	cache     map[prefixKey]int // the Messages API's prompt cache: prefix -> tokens
	replayed  map[string]bool   // thinking signatures, redacted data and encrypted reasoning replayed recordings carried
	rs        responsesMemory   // the Responses API's items and stored responses
	loaded    atomic.Bool       // the ollama flavor has served a chat request
	// loadedModel is the model of that request, as /api/ps names it.
	loadedModel atomic.Value // string
}

// NewServer starts a server playing the scenario on 127.0.0.1 with a random
// port. Like httptest.NewServer it panics if it cannot listen, because a
// test cannot do anything useful without its server.
func NewServer(s *Scenario) *Server {
	srv, err := NewServerAt(s, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return srv
}

// NewServerFunc starts a server that asks fn for each response instead of
// following a scenario; fn is called concurrently, without any server lock
// held, so that many simulated agents can be served at once.
func NewServerFunc(fn func(r RecordedRequest) Response) *Server {
	srv, err := start(nil, fn, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return srv
}

// NewServerAt is NewServer on a chosen address, for the fakemodel command.
// It refuses any address that is not on the loopback interface, because the
// fake model must never be reachable from the network.
func NewServerAt(s *Scenario, addr string) (*Server, error) {
	if s == nil {
		return nil, errors.New("fake model: nil scenario")
	}
	return start(s, nil, addr)
}

func start(sc *Scenario, fn func(RecordedRequest) Response, addr string) (*Server, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake model: listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:      "http://" + ln.Addr().String() + "/v1",
		scenario: sc,
		fn:       fn,
		models:   []string{defaultModel},
	}
	if sc != nil && sc.Model != "" {
		s.models = []string{sc.Model}
	}
	s.idle = sync.NewCond(&s.mu)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/messages", s.handleAPI(messagesAPI{}))
	mux.HandleFunc("POST /v1/responses", s.handleAPI(responsesAPI{}))
	mux.HandleFunc("POST "+geminiPrefix+"{call}", s.handleGemini())
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /api/ps", s.handlePS)
	mux.HandleFunc("POST /api/show", s.handleShow)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.flavor().outside(w, r) })
	s.httpServer = &http.Server{Handler: s.track(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.httpServer.Serve(ln) }()
	return s, nil
}

// checkLoopback accepts only loopback hosts; an empty host would bind every
// interface and is refused too.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fake model: bad address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("fake model: refusing to listen on %q: only loopback addresses (127.0.0.1, ::1, localhost) are allowed", addr)
}

// track counts running handlers so that Close can wait until none is left
// and tests do not race with handlers still recording.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.running++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.running--
			if s.running == 0 {
				s.idle.Broadcast()
			}
			s.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// Requests returns a copy of the recorded model requests in
// arrival order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// ServerTime is the sum of Served over all requests: subtracting it from a
// client's wall time leaves the client's own overhead.
func (s *Server) ServerTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var total time.Duration
	for _, r := range s.requests {
		total += r.Served
	}
	return total
}

// Active is the number of model requests in flight now; like
// Served, a request stops counting just before its final write.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// MaxActive is the peak of Active since the server started.
func (s *Server) MaxActive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive
}

// Close stops the server, drops open connections (which cancels the
// contexts of delayed handlers) and waits for every handler to return. A
// NewServerFunc callback that never returns would make Close wait forever.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		_ = s.httpServer.Close()
		s.mu.Lock()
		for s.running > 0 {
			s.idle.Wait()
		}
		s.mu.Unlock()
	})
}

// authorized reports whether the request carries the scenario's API key.
func (s *Server) authorized(r *http.Request) bool {
	if s.scenario == nil || s.scenario.APIKey == "" {
		return true
	}
	return r.Header.Get("Authorization") == "Bearer "+s.scenario.APIKey
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Anthropic-Version") != "" {
		// Anthropic's clients: the key as x-api-key or a bearer token,
		// and Anthropic's error shape.
		if s.scenario != nil && s.scenario.APIKey != "" && !(messagesAPI{}).authorized(r, s.scenario.APIKey) {
			writeRaw(w, http.StatusUnauthorized, "application/json", messagesAPI{}.errorBody(http.StatusUnauthorized, messagesAPI{}.unauthorized()))
			return
		}
	} else if !s.authorized(r) {
		writeAPIError(w, http.StatusUnauthorized, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	if s.scenario != nil && s.scenario.ModelsStatus != 0 {
		writeAPIError(w, s.scenario.ModelsStatus, "the model list is not available", "server_error", "")
		return
	}
	served := s.models
	if s.scenario != nil && len(s.scenario.Served) > 0 {
		served = append(served, s.scenario.Served...)
		if s.scenario.Served[0] == "-" {
			served = nil
		}
	}
	if r.Header.Get("Anthropic-Version") != "" {
		writeJSON(w, http.StatusOK, anthropicModels(served))
		return
	}
	for _, m := range served {
		list.Data = append(list.Data, model{ID: m, Object: "model", OwnedBy: "fakemodel"})
	}
	list.Data = append([]model{}, list.Data...)
	writeJSON(w, http.StatusOK, list)
}

// rejection is a client error found before any scripted response is used.
type rejection struct {
	status        int
	message, code string
	body          string // the whole body, when the flavor has its own shape
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	x := &exchange{s: s, w: w, r: r}
	x.rec = RecordedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now()}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	x.rec.Body = body
	var rej *rejection
	switch {
	case !s.authorized(r):
		rej = &rejection{status: http.StatusUnauthorized, message: "Incorrect API key provided", code: "invalid_api_key"}
	case err != nil:
		rej = &rejection{status: http.StatusBadRequest, message: "fake model: cannot read request body: " + err.Error()}
	default:
		if err := json.Unmarshal(body, &x.rec.Request); err != nil {
			rej = &rejection{status: http.StatusBadRequest, message: "fake model: cannot decode request: " + err.Error()}
		} else if s.scenario != nil && s.scenario.Model != "" && x.rec.Request.Model != s.scenario.Model {
			st, b := s.flavor().modelNotFound(x.rec.Request.Model)
			rej = &rejection{status: st, body: b}
		} else if s.refusesResponsesOnly(x.rec.Request.Model) {
			rej = &rejection{status: http.StatusNotFound, body: responsesOnlyBody}
		} else if s.scenario != nil && s.scenario.NoTools && len(x.rec.Request.Tools) > 0 {
			st, b := s.flavor().noTools(x.rec.Request.Model)
			rej = &rejection{status: st, body: b}
		} else if s.isOllama() && emptyAssistant(body) {
			rej = &rejection{status: http.StatusBadRequest, body: ollamaEmptyContent()}
		} else if schemaRefused := chatSchemaRefusal(body); schemaRefused != "" {
			rej = &rejection{status: http.StatusBadRequest, body: schemaRefused}
		} else if s.scenario != nil && s.scenario.Alternate && !alternates(&x.rec) {
			st, b := s.alternationRefusal()
			rej = &rejection{status: st, body: b}
		} else if s.scenario != nil {
			if field := s.scenario.refused(&x.rec); field != "" {
				rej = &rejection{status: http.StatusBadRequest, body: refusal(field)}
			}
		}
		if rej == nil && s.isOllama() {
			s.loadedModel.Store(x.rec.Request.Model)
			s.loaded.Store(true)
		}
	}

	resp, ok, seq := s.begin(&x.rec, rej == nil)
	// Settling again is a no-op, so this only matters for early returns.
	defer x.settle(false)

	switch {
	case rej != nil && rej.body != "":
		x.settle(false)
		writeRaw(w, rej.status, "application/json", rej.body)
	case rej != nil:
		x.settle(false)
		writeAPIError(w, rej.status, rej.message, "invalid_request_error", rej.code)
	case s.fn != nil:
		x.respond(s.fn(x.rec))
	case !ok:
		x.settle(false)
		msg := fmt.Sprintf("fake model: scenario %q has no response left for request %d", s.scenario.Name, seq)
		writeAPIError(w, http.StatusInternalServerError, msg, "server_error", "")
	default:
		x.respond(resp)
	}
}

// begin records the request and, for a scenario, takes the next response in
// the same critical section, so responses follow arrival order exactly. seq
// is the 1-based number of the request among those asking for a response.
func (s *Server) begin(rec *RecordedRequest, wantResponse bool) (resp Response, ok bool, seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Index = len(s.requests)
	kept := *rec
	if s.scenario != nil && s.scenario.Forget {
		// The exchange answers from its own copy, rec.
		kept.Body, kept.Request = nil, openai.ChatCompletionRequest{}
	}
	s.requests = append(s.requests, kept)
	s.active++
	s.maxActive = max(s.maxActive, s.active)
	if !wantResponse || s.scenario == nil {
		return Response{}, false, 0
	}
	s.next++
	i := s.next - 1
	n := len(s.scenario.Responses)
	if s.scenario.Loop {
		i %= n
	}
	if i >= n {
		return Response{}, false, s.next
	}
	return s.scenario.Responses[i], true, s.next
}
