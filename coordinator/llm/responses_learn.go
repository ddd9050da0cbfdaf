package llm

import (
	"regexp"
	"sync"
)

// What the Responses API refuses that ralph can leave out and go on
// (responses.go, responsesWire.learn): each is learnt from the first
// refusal, the request goes again at once without it, and so does every
// later request of the client.

// unverifiedRe is the API's refusal of an encrypted reasoning item it
// cannot read: minted by another backend (a base URL changed under a
// resumed session) or otherwise spoilt. OpenAI: 400 invalid_request_error,
// code invalid_encrypted_content, "The encrypted content gAAA…c90= could
// not be verified."
var unverifiedRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)encrypted content.*could not be (verified|decrypted)`)
})

// learnUnverified reports whether f is the API's refusal of the
// request's encrypted reasoning, and leaves every reasoning item of the
// request out of this client's requests from now on: sent again, it
// would be refused again, turn after turn. The conversation keeps them.
func (w *responsesWire) learnUnverified(c *Client, req Request, f *failure) bool {
	if !codeIs(f, "invalid_encrypted_content") && !unverifiedRe().MatchString(f.server.message) {
		return false
	}
	provider, dropped := c.opaqueProvider(), false
	for _, m := range req.Messages {
		for _, o := range m.Opaque {
			if _, ok := reasoningOf(o, provider); ok {
				if _, had := w.droppedReasoning.LoadOrStore(blockKey(o.Block), struct{}{}); !had {
					dropped = true
					w.anyDropped.Store(true)
				}
			}
		}
	}
	return dropped
}

// noSummaryRe is the API's refusal of a reasoning summary: OpenAI gives
// them only to verified organisations (400 "Your organization must be
// verified to generate reasoning summaries.", param reasoning.summary).
var noSummaryRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)reasoning summar|reasoning\.summary`)
})

// learnNoSummary reports whether f is the API's refusal of the reasoning
// summary ralph asks for, and asks for none from now on: the model
// reasons all the same, and its reasoning is carried, only not shown.
func (w *responsesWire) learnNoSummary(f *failure) bool {
	if f.status != 400 || w.noSummary.Load() || !noSummaryRe().MatchString(f.server.message) {
		return false
	}
	w.noSummary.Store(true)
	return true
}
