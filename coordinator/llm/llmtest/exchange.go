package llmtest

import (
	"net/http"
	"time"
)

// exchange is one request being answered.
type exchange struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	rec RecordedRequest
	api wireAPI // nil: chat completions
	// msg is a Messages request as checked, cache what it reads from and
	// writes to the prompt cache; both nil for the other APIs.
	msg   *messagesRequest
	cache *cacheUse
	// rsp is a Responses request as checked, nil for the other APIs.
	rsp *responsesRequest
	// errBody, when set, is the whole body of the refusal a check made,
	// in place of the API's error shape around its words.
	errBody string
	settled bool // only touched by the handler's goroutine
}

// settle records how the request ended. Writers call it just before their
// final write rather than when the handler returns: once a client has read
// the end of a response, Requests, ServerTime and Active must already
// account for it, or a test that checks them right afterwards would race
// with the handler's last few instructions. A later call can still mark
// the request cancelled if that final write fails; otherwise it is a no-op.
func (x *exchange) settle(cancelled bool) {
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &s.requests[x.rec.Index]
	if x.settled {
		rec.Cancelled = rec.Cancelled || cancelled
		return
	}
	x.settled = true
	rec.Served = time.Since(x.rec.Received)
	rec.Cancelled = cancelled
	s.active--
}
