package memory

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// HookTranscript is the name of the session's conversation in Claude
// Code's JSONL line format, beside messages.jsonl: what a hook's
// transcript_path names, since hooks written for Claude Code parse it
// (a loop plugin's Stop hook reads the last assistant message from it).
// transcript.md stays the transcript for people.
const HookTranscript = "transcript.jsonl"

// KeepHookTranscript has the session write its conversation to
// transcript.jsonl as well, from now on, in Claude Code's line format
// (conversation.TranscriptLines), through the same door and redactor as its
// other records. Only a session with hooks keeps it: nothing else reads
// it. cwd is the project root, as Claude Code's lines name it.
func (s *Session) KeepHookTranscript(cwd string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hookLines == nil {
		s.hookLines = &conversation.TranscriptLines{SessionID: s.ID, Cwd: cwd, UUID: newUUID}
	}
}

// appendHookTranscriptLocked appends msgs to transcript.jsonl when the session
// keeps it; s.mu must be held. Each append is whole lines, written
// before AppendMessages returns, so a Stop hook reads the answer that
// made it fire.
func (s *Session) appendHookTranscriptLocked(msgs []conversation.Message) error {
	if s.hookLines == nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	now := time.Now()
	for _, m := range msgs {
		for _, l := range s.hookLines.Lines(m, s.state.Model, false, now) {
			if err := enc.Encode(l); err != nil {
				return fmt.Errorf("encode transcript line: %w", err)
			}
		}
	}
	if buf.Len() == 0 {
		return nil
	}
	return s.appendLocked(filepath.Join(s.Dir, HookTranscript), s.clean(buf.Bytes()))
}

// newUUID is a random version 4 UUID, as Claude Code's line ids are.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
