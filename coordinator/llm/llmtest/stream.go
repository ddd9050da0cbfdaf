package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// defaultChunkSize is how many runes of text go into one content chunk when
// the scenario does not say; small enough that every answer really streams.
const defaultChunkSize = 8

// argPieces is how many fragments tool-call arguments are split into by
// default, so clients must concatenate them like real streamed arguments.
const argPieces = 3

// openStream starts an answer of server-sent events. Flushing the
// headers now lets the client's stream open before the first chunk
// delay, as with a real model that is slow to start; it reports false,
// the exchange settled as cut off, when the client is gone.
func (x *exchange) openStream() (*http.ResponseController, bool) {
	rc := http.NewResponseController(x.w)
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		x.settle(true)
		return nil, false
	}
	return rc, true
}

// writeStream sends the reply as server-sent events in OpenAI's format.
func (x *exchange) writeStream(rp *reply) {
	rc, ok := x.openStream()
	if !ok {
		return
	}

	includeUsage := x.rec.Request.StreamOptions != nil && x.rec.Request.StreamOptions.IncludeUsage && !rp.resp.NoUsage
	events := streamEvents(rp, includeUsage)
	if !rp.resp.Truncate && !rp.resp.Stall && rp.resp.StreamError == "" {
		events = append(events, []byte("[DONE]"))
	}
	if rp.resp.Stall {
		defer func() {
			// Headers and text are out; now nothing, until the client
			// gives up.
			<-x.r.Context().Done()
			x.settle(true)
		}()
	}
	delay := time.Duration(rp.resp.ChunkDelayMS) * time.Millisecond
	for i, ev := range events {
		if !sleepCtx(x.r.Context(), delay) {
			x.settle(true)
			return
		}
		if rp.resp.Hold != nil {
			rp.resp.Hold()
		}
		if i == len(events)-1 && !rp.resp.Stall {
			x.settle(false)
		}
		if _, err := x.w.Write(append(append([]byte("data: "), ev...), '\n', '\n')); err != nil {
			x.settle(true)
			return
		}
		if rc.Flush() != nil {
			x.settle(true)
			return
		}
	}
}

// streamEvents builds the data payloads of a stream, without [DONE]: a role
// chunk, the content chunks, the tool-call chunks, then (unless truncated)
// the finish_reason chunk and, when asked for, the usage chunk.
func streamEvents(rp *reply, includeUsage bool) [][]byte {
	if len(rp.resp.Raw) > 0 {
		events := make([][]byte, len(rp.resp.Raw))
		for i, raw := range rp.resp.Raw {
			events[i] = []byte(raw)
		}
		return events
	}

	var chunks []wireChunk
	add := func(d delta, finish *string) {
		chunks = append(chunks, rp.chunk([]chunkChoice{{Delta: d, FinishReason: finish}}))
	}
	empty := ""
	add(delta{Role: "assistant", Content: &empty}, nil)
	for _, r := range splitRunes(rp.resp.Reasoning, defaultChunkSize) {
		d := delta{ReasoningContent: &r}
		if rp.ollama {
			d = delta{Content: &empty, Reasoning: &r}
		}
		add(d, nil)
	}
	for _, text := range textChunks(rp.resp) {
		add(delta{Content: &text}, nil)
	}
	for _, tcd := range toolCallDeltas(rp.calls, rp.resp.InterleaveToolCalls) {
		add(delta{ToolCalls: []toolCallDelta{tcd}}, nil)
	}
	if rp.resp.StreamError != "" || rp.resp.Stall {
		events := make([][]byte, 0, len(chunks)+1)
		for _, c := range chunks {
			b, _ := json.Marshal(c)
			events = append(events, b)
		}
		if rp.resp.StreamError != "" {
			events = append(events, []byte(rp.resp.StreamError))
		}
		return events
	}
	if !rp.resp.Truncate {
		finish := rp.finish
		add(delta{}, &finish)
		if includeUsage {
			usage := rp.usage
			c := rp.chunk([]chunkChoice{})
			c.Usage = &usage
			chunks = append(chunks, c)
		}
	}

	events := make([][]byte, len(chunks))
	for i, c := range chunks {
		// Marshalling these plain structs cannot fail.
		events[i], _ = json.Marshal(c)
	}
	return events
}

func (rp *reply) chunk(choices []chunkChoice) wireChunk {
	c := wireChunk{ID: rp.id, Object: "chat.completion.chunk", Created: rp.created, Model: rp.model, Choices: choices}
	if rp.ollama {
		c.SystemFingerprint = ollamaFingerprint
	}
	return c
}

// toolCallDeltas turns calls into stream fragments: a header with index, id,
// type and name (and empty arguments, as OpenAI sends), then argument
// fragments carrying only the index. Calls follow one another unless
// interleave asks for round-robin order.
func toolCallDeltas(calls []ToolCall, interleave bool) []toolCallDelta {
	perCall := make([][]toolCallDelta, len(calls))
	for i, tc := range calls {
		frags := []toolCallDelta{{Index: i, ID: tc.ID, Type: "function", Function: functionDelta{Name: tc.Name}}}
		for _, arg := range argChunks(tc) {
			frags = append(frags, toolCallDelta{Index: i, Function: functionDelta{Arguments: arg}})
		}
		perCall[i] = frags
	}
	var out []toolCallDelta
	if !interleave {
		for _, frags := range perCall {
			out = append(out, frags...)
		}
		return out
	}
	for round := 0; ; round++ {
		sent := false
		for _, frags := range perCall {
			if round < len(frags) {
				out = append(out, frags[round])
				sent = true
			}
		}
		if !sent {
			return out
		}
	}
}

// textChunks is the content split as the scenario asks.
func textChunks(resp Response) []string {
	if len(resp.TextChunks) > 0 {
		return resp.TextChunks
	}
	size := resp.ChunkSize
	if size <= 0 {
		size = defaultChunkSize
	}
	return splitRunes(resp.Text, size)
}

// joinedText is the whole assistant content of a response.
func joinedText(resp Response) string {
	if len(resp.TextChunks) > 0 {
		return strings.Join(resp.TextChunks, "")
	}
	return resp.Text
}

// argChunks is the argument text split as the scenario asks.
func argChunks(tc ToolCall) []string {
	if len(tc.ArgChunks) > 0 {
		return tc.ArgChunks
	}
	n := len([]rune(tc.Arguments))
	if n == 0 {
		return nil
	}
	return splitRunes(tc.Arguments, (n+argPieces-1)/argPieces)
}

// splitRunes cuts s into pieces of size runes, never inside a UTF-8
// sequence, because each piece must be valid JSON string content.
func splitRunes(s string, size int) []string {
	var out []string
	runes := []rune(s)
	for len(runes) > 0 {
		n := min(size, len(runes))
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}
