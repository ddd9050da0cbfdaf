package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// go-openai hides what ralph needs to judge a failure: the headers of an
// error response (Retry-After), the raw error body (it loses the status of
// {"error":"<string>"} bodies and fails on empty ones), and errors sent
// inside an HTTP 200 stream (a string-form one becomes "unexpected end of
// JSON input", OpenRouter's chunk with an "error" field passes as a
// chunk). The tap is a RoundTripper that copies those into a slot carried
// by the request's context, and notes when the last byte arrived, which
// the idle watchdog reads.
type tap struct{ next http.RoundTripper }

type slotKey struct{}

// maxErrorBody bounds how much of an error body is kept; real error
// objects are far smaller, and an HTML page's title comes first.
const maxErrorBody = 64 << 10

// maxLine bounds the part of one stream line kept for inspection: error
// events are short, and a long content line need not be buffered whole.
const maxLine = 64 << 10

// attemptSlot is what the tap learnt about one attempt's response.
type attemptSlot struct {
	last atomic.Int64 // unix nanoseconds of the request start or the last byte received
	// answered is set by the first byte of the answer's body.
	answered atomic.Bool

	mu          sync.Mutex
	status      int
	header      http.Header // an error response's rate-limit headers
	at          time.Time
	body        []byte       // an error response's body (status >= 400)
	streamErr   *serverError // the first error inside a 200 answer
	contentType string
	// messages is a chat completions request's "messages" array, encoded
	// apart (chatjson.go) and put in place of the null go-openai wrote.
	messages []byte
	// tools is the request's "tools" array, encoded once (tools.go) and
	// added to the body go-openai built without it.
	tools []byte
	// signatures are the extra contents (Gemini's thought signatures)
	// to add back to the tool calls of those ids (signatures.go).
	signatures map[string]json.RawMessage
	// webSearch adds web_search_options to the body (websearch.go).
	webSearch bool
}

func newSlot() *attemptSlot {
	s := &attemptSlot{}
	s.touch()
	return s
}

func withSlot(ctx context.Context, s *attemptSlot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

// withoutSlot is ctx for a request beside the attempt's (a question to
// the server's native API): cancelled with the attempt, without its tools.
func withoutSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, slotKey{}, (*attemptSlot)(nil))
}

func (s *attemptSlot) touch() { s.last.Store(time.Now().UnixNano()) }

// silence is how long nothing has arrived.
func (s *attemptSlot) silence() time.Duration {
	return time.Since(time.Unix(0, s.last.Load()))
}

// response is the status and error body seen, if any.
func (s *attemptSlot) response() (int, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status, s.body
}

func (s *attemptSlot) inStream() *serverError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streamErr
}

// retryAfterWait is the wait an error response's Retry-After asks for.
func (s *attemptSlot) retryAfterWait() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return parseRetryAfter(s.header.Get("Retry-After"), s.at)
}

// limitHeader is an error response's rate-limit headers (nil for an
// error inside a 200 answer, whose headers say nothing about it).
func (s *attemptSlot) limitHeader() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status < 400 {
		return nil
	}
	return s.header
}

// receivedAt is when the response's headers arrived, or now.
func (s *attemptSlot) receivedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		return time.Now()
	}
	return s.at
}

// limitHeaders are the response headers that say when a rate limit
// resets (see limitWait).
var limitHeaders = []string{
	"Retry-After", "Retry-After-Ms", "X-Ratelimit-Reset", "X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens",
	"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens",
	// Anthropic's, one reset and one remaining count per limit (limits.go).
	"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Tokens-Reset",
	"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Reset",
	"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Tokens-Remaining",
	"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Remaining",
}

func (t tap) RoundTrip(req *http.Request) (*http.Response, error) {
	slot, ok := req.Context().Value(slotKey{}).(*attemptSlot)
	ok = ok && slot != nil
	if ok && (slot.messages != nil || slot.tools != nil) {
		var err error
		if req, err = withMessagesAndTools(req, slot.messages, slot.tools); err != nil {
			return nil, err
		}
	}
	if ok && slot.webSearch {
		var err error
		if req, err = withSearchOptions(req); err != nil {
			return nil, err
		}
	}
	if ok && len(slot.signatures) > 0 {
		var err error
		if req, err = withSignatures(req, slot.signatures); err != nil {
			return nil, err
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || !ok {
		return resp, err
	}
	slot.touch()
	slot.mu.Lock()
	slot.status = resp.StatusCode
	slot.at = time.Now()
	slot.contentType = resp.Header.Get("Content-Type")
	slot.mu.Unlock()
	if resp.StatusCode >= 400 {
		// Read the body here, once, and hand go-openai a copy: it is
		// small, and the one chance to see it as the server sent it.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		h := http.Header{}
		for _, k := range limitHeaders {
			if v := resp.Header.Get(k); v != "" {
				h.Set(k, v)
			}
		}
		slot.mu.Lock()
		slot.header = h
		slot.body = body
		slot.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	resp.Body = &tapBody{rc: resp.Body, slot: slot}
	return resp, nil
}

// tapBody passes a 200 answer through, noting when bytes arrive and
// looking at each line for an error event.
type tapBody struct {
	rc   io.ReadCloser
	slot *attemptSlot
	line []byte
	long bool // the current line outgrew maxLine and is not inspected
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.slot.touch()
		b.slot.answered.Store(true)
		b.scan(p[:n])
	}
	if err == io.EOF && len(b.line) > 0 {
		// A body that is one JSON object without a newline (LM Studio's
		// answer to an unknown path) is a line too.
		b.inspect(b.line)
		b.line = b.line[:0]
	}
	return n, err
}

func (b *tapBody) Close() error { return b.rc.Close() }

func (b *tapBody) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !b.long {
			if len(b.line)+len(part) > maxLine {
				b.long, b.line = true, b.line[:0]
			} else {
				b.line = append(b.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !b.long {
			b.inspect(b.line)
		}
		b.line, b.long = b.line[:0], false
		p = p[i+1:]
	}
}

// inspect records the first error a line carries: an SSE data line whose
// JSON has an "error" field (OpenAI, Ollama, vLLM, OpenRouter — whose
// chunk also has choices with finish_reason "error"), llama.cpp's older
// "error: {…}" event line, or a bare JSON object with an "error" field
// (a server answering 200 with an error body, like LM Studio).
func (b *tapBody) inspect(line []byte) {
	line = bytes.TrimSpace(line)
	for _, prefix := range [][]byte{[]byte("data:"), []byte("error:")} {
		if bytes.HasPrefix(line, prefix) {
			line = bytes.TrimSpace(line[len(prefix):])
			break
		}
	}
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(`"error"`)) {
		return
	}
	if !hasErrorField(line) {
		return
	}
	se, ok := parseErrorJSON(line)
	if !ok {
		return
	}
	b.slot.mu.Lock()
	if b.slot.streamErr == nil {
		b.slot.streamErr = &se
	}
	b.slot.mu.Unlock()
}

// hasErrorField reports a top-level, non-null "error" field: the word
// inside a content string does not count.
func hasErrorField(line []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return false
	}
	raw, ok := top["error"]
	return ok && !isNull(raw)
}
