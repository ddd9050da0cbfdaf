package llm

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A rate-limited endpoint says when to come back in many ways, and ralph
// reads them all, so that a limit that resets in two hours is waited out
// (by the task loop, see ResetTime) rather than spent on retries:
//
//   - Retry-After, in seconds or as an HTTP date (RFC 9110), and
//     Retry-After-Ms (Azure OpenAI; OpenAI's SDKs read it first);
//   - OpenAI's x-ratelimit-reset-requests and x-ratelimit-reset-tokens,
//     durations such as "1s", "6m0s" or "17.28s", next to
//     x-ratelimit-remaining-requests and -tokens, which say which of the
//     two ran out (platform.openai.com/docs/guides/rate-limits; Groq sends
//     the same);
//   - X-RateLimit-Reset, a time since the epoch (in milliseconds from
//     OpenRouter, which also copies it into the 429 body's
//     error.metadata.headers, in seconds elsewhere) or, when small, a
//     number of seconds;
//   - Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-reset, RFC 3339 times, next to -remaining counts
//     that say which ran out, beside its Retry-After in seconds;
//   - the message itself: OpenAI's "Rate limit reached for gpt-4o … Please
//     try again in 6m0s.", and "retry after 30 seconds" from others.
//
// OpenAI's insufficient_quota, sent as a 429 too, is no wait: the money is
// gone until someone pays, and the error table reports it as such.

// limitWait is how long, from at, the endpoint asks ralph to wait before
// it tries again; ok is false when it does not say.
func limitWait(f *failure, h http.Header, at time.Time) (time.Duration, bool) {
	var waits []time.Duration
	add := func(d time.Duration, ok bool) {
		if ok {
			waits = append(waits, max(d, 0))
		}
	}
	if h != nil {
		if v := h.Get("Retry-After-Ms"); v != "" {
			if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
				add(saturate(ms/1000), true)
			}
		}
		add(parseRetryAfter(h.Get("Retry-After"), at))
		add(openAIReset(h))
		add(anthropicReset(h, at))
		add(epochReset(h.Get("X-Ratelimit-Reset"), at))
	}
	add(epochReset(f.server.reset, at))
	add(messageWait(f.server.message))
	if len(waits) == 0 {
		return 0, false
	}
	// The servers that send several mean the same moment; the latest of
	// them is the one that is sure to have passed.
	longest := waits[0]
	for _, w := range waits[1:] {
		longest = max(longest, w)
	}
	return longest, true
}

// openAIReset reads OpenAI's reset headers: the reset of the limit that
// ran out, or the later one when the remaining counts do not say.
func openAIReset(h http.Header) (time.Duration, bool) {
	req, reqOK := parseResetDuration(h.Get("X-Ratelimit-Reset-Requests"))
	tok, tokOK := parseResetDuration(h.Get("X-Ratelimit-Reset-Tokens"))
	reqOut := strings.TrimSpace(h.Get("X-Ratelimit-Remaining-Requests")) == "0"
	tokOut := strings.TrimSpace(h.Get("X-Ratelimit-Remaining-Tokens")) == "0"
	switch {
	case reqOK && reqOut && !(tokOK && tokOut):
		return req, true
	case tokOK && tokOut && !(reqOK && reqOut):
		return tok, true
	case reqOK && tokOK:
		return max(req, tok), true
	case reqOK:
		return req, true
	}
	return tok, tokOK
}

// anthropicLimits are the limits Anthropic reports in its headers.
var anthropicLimits = []string{"requests", "tokens", "input-tokens", "output-tokens"}

// anthropicReset reads Anthropic's reset headers: the latest reset of
// the limits that ran out (remaining 0), or, when none says so, the
// soonest reset still to come. A reset in the past says nothing.
func anthropicReset(h http.Header, at time.Time) (time.Duration, bool) {
	var out, soonest time.Duration
	var anyOut, anySoon bool
	for _, l := range anthropicLimits {
		v := strings.TrimSpace(h.Get("Anthropic-Ratelimit-" + l + "-Reset"))
		t, err := time.Parse(time.RFC3339, v)
		if v == "" || err != nil || !t.After(at) {
			continue
		}
		d := t.Sub(at)
		if strings.TrimSpace(h.Get("Anthropic-Ratelimit-"+l+"-Remaining")) == "0" {
			out, anyOut = max(out, d), true
		}
		if !anySoon || d < soonest {
			soonest, anySoon = d, true
		}
	}
	if anyOut {
		return out, true
	}
	return soonest, anySoon
}

// resetDurationRe is OpenAI's duration notation with an optional number of
// days first ("1d2h3m4.5s", "6m0s", "20ms").
var resetDurationRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(\d+)d)?((?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|ns))*)$`)
})

func parseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	m := resetDurationRe().FindStringSubmatch(v)
	if v == "" || m == nil {
		return 0, false
	}
	var d time.Duration
	if m[1] != "" {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 365 {
			return 0, false
		}
		d = time.Duration(days) * 24 * time.Hour
	}
	if m[2] != "" {
		rest, err := time.ParseDuration(m[2])
		if err != nil {
			return 0, false
		}
		d += rest
	}
	return d, true
}

// epochReset reads an X-RateLimit-Reset value: milliseconds or seconds
// since the epoch, or, for a number too small to be a date, seconds from
// now.
func epochReset(v string, at time.Time) (time.Duration, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if v == "" || err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, false
	}
	switch {
	case n >= 1e12:
		return time.UnixMilli(int64(n)).Sub(at), true
	case n >= 1e9:
		return time.Unix(int64(n), 0).Sub(at), true
	}
	return saturate(n), true
}

// messageWaitRe finds a wait a server's message names: OpenAI's "Please
// try again in 6m0s." or "in 20ms", and "retry after 30 seconds".
var messageWaitRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:try again|retry) (?:in|after) ((?:\d+d)?(?:\d+(?:\.\d+)?(?:h|ms|m|s))+|\d+(?:\.\d+)? ?(?:seconds?|secs?|minutes?|mins?|hours?))\b`)
})

func messageWait(msg string) (time.Duration, bool) {
	m := messageWaitRe().FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	if d, ok := parseResetDuration(m[1]); ok {
		return d, true
	}
	s := strings.ReplaceAll(m[1], " ", "")
	i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if i <= 0 {
		return 0, false
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	switch u := strings.ToLower(s[i:]); {
	case strings.HasPrefix(u, "h"):
		n *= 3600
	case strings.HasPrefix(u, "m"):
		n *= 60
	}
	return saturate(n), true
}

// saturate converts seconds to a Duration, saturating instead of wrapping
// around for absurd values.
func saturate(secs float64) time.Duration {
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(secs * float64(time.Second))
}

// ResetTime reports when a model call that failed on a rate limit may be
// tried again, when the endpoint said and it was later than one call
// waits (Config.MaxRetryAfter): the task loop then waits until that time
// instead of failing the task.
func ResetTime(err error) (time.Time, bool) {
	var e *Error
	if errors.As(err, &e) && !e.RetryAt.IsZero() {
		return e.RetryAt, true
	}
	return time.Time{}, false
}
