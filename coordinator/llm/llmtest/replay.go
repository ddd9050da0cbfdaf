package llmtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
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
	body, err := os.ReadFile(x.s.scenario.replayPath(resp.Replay))
	if err != nil {
		x.settle(false)
		writeAPIError(x.w, http.StatusInternalServerError, fmt.Sprintf("fake model: replay: %v", err), "server_error", "")
		return
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := x.w.Header()
	if err := replayHeaders(h, x.s.scenario.replayPath(resp.Replay)); err != nil {
		x.settle(false)
		writeAPIError(x.w, http.StatusInternalServerError, fmt.Sprintf("fake model: replay: %v", err), "server_error", "")
		return
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

// replayHeaders sets the headers recorded beside a body, in the file of
// the same name ending in .headers ("Name: value" lines), if there is one.
func replayHeaders(h http.Header, body string) error {
	data, err := os.ReadFile(strings.TrimSuffix(body, filepath.Ext(body)) + ".headers")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		h.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return nil
}
