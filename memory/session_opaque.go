package memory

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// A message's opaque blocks (Anthropic's signed thinking, the Responses
// API's encrypted reasoning, Gemini's signatures) go back to the provider
// that wrote them byte for byte, or the provider refuses the request (a
// signature that no longer matches, encrypted content it cannot verify),
// and a resumed session reads them from the record. So the redactor,
// which rewrites every other byte of the record, never rewrites them: a
// line is redacted without its blocks, which are added to it as they
// are. A block that holds a secret (thinking that read the key pasted
// into a message) is left out of the record instead, as redacting it
// would spoil it: the turn is sent without it after a resume, which
// every API takes (a tool turn without thinking goes without thinking;
// calls without their reasoning need no reasoning when no item ids are
// sent).

// messageLines is msgs as the lines of a messages.jsonl, each as line
// wraps it (a message, or a child's message with its agent's id),
// redacted save its opaque blocks.
func (s *Session) messageLines(msgs []conversation.Message, line func(conversation.Message) any) ([]byte, error) {
	var out, buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		opaque := s.keptOpaque(m.Opaque)
		m.Opaque = nil
		buf.Reset()
		if err := enc.Encode(line(m)); err != nil {
			return nil, fmt.Errorf("encode message: %w", err)
		}
		clean := s.clean(buf.Bytes())
		if len(opaque) == 0 {
			out.Write(clean)
			continue
		}
		// {…}\n becomes {…,"opaque":[…]}\n. The line is written out
		// before buf, which clean may share, is used again.
		end := bytes.LastIndexByte(clean, '}')
		if end < 0 {
			return nil, fmt.Errorf("encode message: the line %q is no object", clean)
		}
		out.Write(clean[:end])
		buf.Reset()
		if err := enc.Encode(opaque); err != nil {
			return nil, fmt.Errorf("encode message: %w", err)
		}
		out.WriteString(`,"opaque":`)
		out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		out.WriteString("}\n")
	}
	return out.Bytes(), nil
}

// keptOpaque is the blocks the record keeps: those that hold no secret.
func (s *Session) keptOpaque(blocks []conversation.OpaqueBlock) []conversation.OpaqueBlock {
	var kept []conversation.OpaqueBlock
	for _, o := range blocks {
		if !s.redact.Contains(o.Provider) && !s.redact.Contains(string(o.Block)) {
			kept = append(kept, o)
		}
	}
	return kept
}
