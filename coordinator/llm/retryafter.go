package llm

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After value received at time at:
// delay-seconds or an HTTP date.
func parseRetryAfter(v string, at time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
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
