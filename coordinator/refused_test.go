package coordinator

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// A refused message is marked, in memory and on disk, left out of the
// next request, said once, and given back by TakeRefused; a 500 after
// every retry marks nothing.
func TestRefusedMessageSetAside(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"status":400,"body":"{\"error\":{\"message\":\"too long\"}}"},
		{"text":"hi"},
		{"status":500},{"status":500},{"status":500},
		{"text":"both"}]}`)
	res := h.coord.Run(context.Background(), "a huge paste")
	if !res.IsError || !strings.Contains(res.Err.Error(), "set aside") || !strings.Contains(res.Err.Error(), "HTTP 400") {
		t.Fatalf("refused run = %+v", res)
	}
	if n := h.count(event.MessageRefused); n != 1 {
		t.Fatalf("%d message_refused events, want 1", n)
	}
	if text, ok := h.coord.TakeRefused(); !ok || text != "a huge paste" {
		t.Fatalf("TakeRefused = %q, %v", text, ok)
	}
	h.coord.Run(context.Background(), "hello")
	for _, m := range h.lastRequestMessages() {
		if strings.Contains(m.Content, "huge paste") {
			t.Fatalf("the refused message was sent again: %+v", h.lastRequestMessages())
		}
	}
	msgs, err := memory.LoadMessages(h.fs, h.sess.Dir)
	if err != nil || len(msgs) != 4 || !strings.HasPrefix(msgs[1].Refused, "HTTP 400") || msgs[2].Refused != "" {
		t.Fatalf("saved conversation (%v): %+v", err, msgs)
	}
	// A server error is no refusal: the text is kept and goes out with
	// the next message.
	res = h.coord.Run(context.Background(), "kept")
	if !res.IsError || strings.Contains(res.Err.Error(), "set aside") {
		t.Fatalf("500 run = %+v", res)
	}
	h.coord.Run(context.Background(), "next")
	got := h.lastRequestMessages()
	if last := got[len(got)-1]; last.Content != "kept\n\nnext" {
		t.Fatalf("after a 500 the last turn is %q, want the kept text merged with the next", last.Content)
	}
}

// An answer the content filter stopped sets the message aside too.
func TestContentFilterSetsMessageAside(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"","finish_reason":"content_filter"},{"text":"fine"}]}`)
	res := h.coord.Run(context.Background(), "something filtered")
	if !res.IsError || !strings.Contains(res.Err.Error(), "set aside") {
		t.Fatalf("filtered run = %+v", res)
	}
	h.coord.Run(context.Background(), "something else")
	for _, m := range h.lastRequestMessages() {
		if strings.Contains(m.Content, "filtered") {
			t.Fatalf("the filtered message was sent again: %+v", h.lastRequestMessages())
		}
	}
}
