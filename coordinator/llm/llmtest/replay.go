package llmtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// replayPath is where a response's recorded body is read from.
func (sc *Scenario) replayPath(name string) string {
	if sc == nil || filepath.IsAbs(name) || sc.dir == "" {
		return name
	}
	return filepath.Join(sc.dir, name)
}

// replay sends the recorded body the response names, as it was recorded:
// an event stream event by event, anything else as one JSON body. The
// bytes are not reformatted, so the real server's quirks (the padding of
// its data lines, its pings) reach the client as they were.
func (x *exchange) replay(resp Response) {
	body, recorded, err := readRecording(x.s.scenario.replayPath(resp.Replay))
	if err != nil {
		x.settle(false)
		writeAPIError(x.w, http.StatusInternalServerError, fmt.Sprintf("fake model: replay: %v", err), "server_error", "")
		return
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	x.s.rememberOpaque(body)
	h := x.w.Header()
	for k, v := range recorded {
		h[k] = v
	}
	for k, v := range resp.Headers {
		h.Set(k, v) // the scenario's own headers win
	}
	if !strings.HasSuffix(resp.Replay, ".sse") {
		if resp.Truncate {
			body = body[:len(body)/2]
		}
		x.settle(false)
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/json")
		}
		x.w.WriteHeader(status)
		_, _ = x.w.Write(body)
		return
	}
	events := bytes.SplitAfter(body, []byte("\n\n"))
	if len(events) > 0 && len(bytes.TrimSpace(events[len(events)-1])) == 0 {
		events = events[:len(events)-1]
	}
	if resp.Truncate {
		events = events[:len(events)/2]
	}
	rc := http.NewResponseController(x.w)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(status)
	if rc.Flush() != nil {
		x.settle(true)
		return
	}
	delay := time.Duration(resp.ChunkDelayMS) * time.Millisecond
	for i, ev := range events {
		if !sleepCtx(x.r.Context(), delay) {
			x.settle(true)
			return
		}
		if i == len(events)-1 {
			x.settle(false)
		}
		if _, err := x.w.Write(ev); err != nil || rc.Flush() != nil {
			x.settle(true)
			return
		}
	}
	x.settle(false)
}

// readRecording reads a recorded body and the headers recorded beside
// it, in the file of the same name ending in .headers ("Name: value"
// lines), if there is one. It is the stand-in's one read of a test's
// fixture besides LoadScenario's; neither is a project's file.
func readRecording(path string) ([]byte, http.Header, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	h := http.Header{}
	data, err := os.ReadFile(strings.TrimSuffix(path, filepath.Ext(path)) + ".headers")
	if errors.Is(err, fs.ErrNotExist) {
		return body, h, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			h.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return body, h, nil
}

// opaqueField finds the signatures of thinking blocks and the data of
// redacted ones (the Messages API's), and the encrypted_content of
// reasoning items (the Responses API's), in a recorded body, streamed or
// whole.
var opaqueField = regexp.MustCompile(`"(?:signature|data|encrypted_content)"\s*:\s*"([^"]+)"`)

// rememberOpaque keeps the signatures, redacted data and encrypted
// reasoning a replayed body carries, so that a client sending them back
// is not refused: they are the real API's, which the stand-in cannot
// check.
func (s *Server) rememberOpaque(body []byte) {
	found := opaqueField.FindAllSubmatch(body, -1)
	if len(found) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replayed == nil {
		s.replayed = map[string]bool{}
	}
	for _, m := range found {
		s.replayed[string(m[1])] = true
	}
}

// replayedOpaque reports whether a replayed body carried v.
func (s *Server) replayedOpaque(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replayed[v]
}
