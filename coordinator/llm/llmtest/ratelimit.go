package llmtest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// RateLimit makes a response the 429 a real server sends when a rate or
// usage limit is hit, resetting ResetS seconds after the request arrived,
// in the server's own shape:
//
//   - "openai" (the default): no Retry-After, but x-ratelimit-limit-,
//     -remaining- and -reset-requests and -tokens, the reset as a
//     duration ("2m0s"), and the body {"error":{"message":"Rate limit
//     reached for <model> in organization org-… on requests per min
//     (RPM): Limit 3, Used 3, Requested 1. Please try again in 2m0s.
//     Visit …","type":"requests","param":null,"code":"rate_limit_exceeded"}}
//     (platform.openai.com/docs/guides/rate-limits, and the messages
//     people quote from it);
//   - "openrouter": its body {"error":{"message":"Rate limit exceeded:
//     free-models-per-day. …","code":429,"metadata":{"headers":
//     {"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0",
//     "X-RateLimit-Reset":"<ms since the epoch>"},"provider_name":null}}}
//     and no header that says when;
//   - "retry_after": a plain Retry-After in seconds, as vLLM behind a
//     proxy or Azure send, with an OpenAI body;
//   - "anthropic" (the default in the Messages API): retry-after in
//     seconds and anthropic-ratelimit-requests-, -tokens-,
//     -input-tokens- and -output-tokens- -limit, -remaining and -reset,
//     the resets as RFC 3339 times, and the body {"type":"error","error":
//     {"type":"rate_limit_error","message":"This request would exceed the
//     rate limit for your organization … of 50 requests per minute. …"},
//     "request_id":…} (docs.claude.com/en/api/rate-limits and
//     /en/api/errors; testdata/anthropic/rate_limit.documented.*);
//   - "anthropic_reset": the same without retry-after, so that only the
//     RFC 3339 resets say when;
//   - "quota": OpenAI's insufficient_quota, also a 429, which no wait
//     cures ("You exceeded your current quota, please check your plan and
//     billing details.").
type RateLimit struct {
	Shape  string  `json:"shape,omitempty"`
	ResetS float64 `json:"reset_s"`
}

// writeRateLimit sends rl's 429 for a request received at.
func writeRateLimit(w http.ResponseWriter, rl RateLimit, model string, at time.Time) {
	reset := time.Duration(rl.ResetS * float64(time.Second))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	var body string
	switch rl.Shape {
	case "openrouter":
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day",
			"code":    429,
			"metadata": map[string]any{
				"headers": map[string]string{
					"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0",
					"X-RateLimit-Reset": strconv.FormatInt(at.Add(reset).UnixMilli(), 10),
				},
				"provider_name": nil,
			},
		}})
		body = string(b)
	case "retry_after":
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(rl.ResetS))))
		body = errorBody("Rate limit exceeded. Please retry later.", "rate_limit_error", "rate_limit_exceeded")
	case "anthropic", "anthropic_reset":
		if rl.Shape == "anthropic" {
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(rl.ResetS))))
		}
		when := at.Add(reset).UTC().Format(time.RFC3339)
		soon := at.Add(time.Second).UTC().Format(time.RFC3339)
		for _, kind := range []struct{ name, limit, remaining, reset string }{
			{"requests", "50", "0", when},
			{"tokens", "50000", "48000", soon},
			{"input-tokens", "40000", "39000", soon},
			{"output-tokens", "10000", "9000", soon},
		} {
			h.Set("Anthropic-Ratelimit-"+kind.name+"-Limit", kind.limit)
			h.Set("Anthropic-Ratelimit-"+kind.name+"-Remaining", kind.remaining)
			h.Set("Anthropic-Ratelimit-"+kind.name+"-Reset", kind.reset)
		}
		body = messagesAPI{}.errorBody(http.StatusTooManyRequests, "This request would exceed the rate limit for your organization (fake-org) of 50 requests per minute. "+
			"For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. "+
			"Please reduce the prompt length or the maximum tokens requested, or try again later. "+
			"You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.")
	case "quota":
		body = errorBody("You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
			"insufficient_quota", "insufficient_quota")
	default:
		wait := reset.Round(time.Millisecond).String()
		h.Set("X-Ratelimit-Limit-Requests", "3")
		h.Set("X-Ratelimit-Remaining-Requests", "0")
		h.Set("X-Ratelimit-Reset-Requests", wait)
		h.Set("X-Ratelimit-Limit-Tokens", "40000")
		h.Set("X-Ratelimit-Remaining-Tokens", "39000")
		h.Set("X-Ratelimit-Reset-Tokens", "1.5s")
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("Rate limit reached for %s in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. "+
				"Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.", model, wait),
			"type": "requests", "param": nil, "code": "rate_limit_exceeded",
		}})
		body = string(b)
	}
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(body))
}
