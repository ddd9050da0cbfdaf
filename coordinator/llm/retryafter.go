package llm

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// go-openai does not expose the headers of an error response, yet a polite
// client must honour Retry-After. headerRecorder is a RoundTripper that
// copies that header into a slot carried by the request's context.
type headerRecorder struct{ next http.RoundTripper }

type slotKey struct{}

type recordedHeader struct {
	mu    sync.Mutex
	value string
	at    time.Time
}

func withHeaderSlot(ctx context.Context, h *recordedHeader) context.Context {
	return context.WithValue(ctx, slotKey{}, h)
}

func (h headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 400 {
		if slot, ok := req.Context().Value(slotKey{}).(*recordedHeader); ok {
			slot.mu.Lock()
			slot.value = resp.Header.Get("Retry-After")
			slot.at = time.Now()
			slot.mu.Unlock()
		}
	}
	return resp, err
}

// retryAfter parses the recorded header: delay-seconds or an HTTP date.
func (h *recordedHeader) retryAfter() (time.Duration, bool) {
	h.mu.Lock()
	v, at := strings.TrimSpace(h.value), h.at
	h.mu.Unlock()
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		// Converting an out-of-range float to an integer wraps around to a
		// negative Duration, which would turn "wait ages" into "retry now";
		// saturate so the MaxRetryAfter check refuses it instead.
		if secs >= float64(math.MaxInt64)/float64(time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(at)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
