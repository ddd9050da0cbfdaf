package event

import "time"

// The payloads below are what the model client reported, as an event
// carries them. They are the event's own types, with the members and
// JSON names of the model client's (llm.RetryInfo, llm.FallbackInfo,
// llm.SearchInfo), which the coordinator converts when it publishes
// them: the contract does not pull the model client in.

// RetryInfo describes a retry the client is about to make, so faces can show
// it and discard any partial text of the failed attempt.
type RetryInfo struct {
	Attempt int           `json:"attempt"` // the attempt that failed, from 1
	Wait    time.Duration `json:"wait"`
	Reason  string        `json:"reason"`
}

// FallbackInfo describes a turn moved to a fallback model, so faces can
// say so and discard any partial text of the failed model.
type FallbackInfo struct {
	// From is the model that failed: the session's, or the fallback
	// model before To.
	From string `json:"from"`
	// To is the fallback model the turn goes to.
	To string `json:"to"`
	// Reason is how From failed, in a few words ("HTTP 529").
	Reason string `json:"reason"`
	// Note says, the first time another provider's model answers, what
	// does not carry over (the prompt cache, thinking signatures).
	Note string `json:"note,omitempty"`
}

// SearchInfo is one search the provider ran, as the faces show it.
type SearchInfo struct {
	// Query is what was searched for (the model's words: untrusted).
	Query string `json:"query,omitempty"`
	// Results is how many results came back; Error the provider's error
	// code (max_uses_exceeded, too_many_requests, …) when it failed.
	Results int    `json:"results"`
	Error   string `json:"error,omitempty"`
}
