package memory

import (
	"errors"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// Every line of a session's messages.jsonl carries its place in the
// conversation, "seq" (1 for the first line, the system prompt), because
// a conversation that lost a message in its middle reads like a whole
// one: an append that failed (a full disk) while a later one succeeded
// would leave the model's next turn answering a prompt the record no
// longer has. The seq is given to a message when it is appended, whether
// or not the write succeeds, so such a record shows its hole, and `ralph
// -c` refuses it rather than going on from a conversation the model never
// had. Lines written before the seq was (older records) have none and
// are read as they always were; new lines appended to such a record go on
// from its line count, so the two kinds mix without a false hole.

// seqLine is one line of messages.jsonl: the message and its seq. The
// seq is written after the message's fields, so a line still begins as
// a message's does.
type seqLine struct {
	conversation.Message
	Seq int `json:"seq,omitempty"`
}

// seqHole is the first line whose seq is not its place.
type seqHole struct{ line, seq int }

// holeError is the sentence that a session's conversation has a hole.
func holeError(id string, h *seqHole) error {
	if h.seq > h.line {
		return NoSessionf("session %s is not continued: its conversation's record lacks %s before line %d (ralph could not write them), so the model would go on from a conversation it never had; start a new session with your prompt",
			id, messagesWord(h.seq-h.line), h.line)
	}
	return NoSessionf("session %s is not continued: line %d of its conversation's record says it is message %d, so the record was changed or damaged; start a new session with your prompt", id, h.line, h.seq)
}

// messagesWord is n messages in words.
func messagesWord(n int) string {
	if n == 1 {
		return "a message"
	}
	return text.Counted(n, "message", "messages")
}

// unwritten is a failed append that left nothing of its data in the log:
// the write was cut back whole, or the log could not even be opened.
type unwritten struct{ err error }

func (e *unwritten) Error() string { return e.err.Error() }
func (e *unwritten) Unwrap() error { return e.err }

// NothingWritten reports whether err, from AppendMessages, left nothing
// of the messages in the record: their seqs were given back, so a caller
// that takes the messages back out of its conversation may go on, and
// what it appends next fills their places without a hole. Anything else
// (a part of a line that could not be cut back) leaves the seqs taken.
func NothingWritten(err error) bool {
	var u *unwritten
	return errors.As(err, &u)
}
