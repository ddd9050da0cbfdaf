package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// Input formats (--input-format): how a one-shot reads its task.
const (
	// InputText is the task as an argument, piped standard input its
	// context (or the task itself).
	InputText = "text"
	// InputStreamJSON is Claude Code's stream-json input, which its
	// Agent SDK writes: one JSON object a line on standard input, each
	// user message a turn of its own, answered before the next is read.
	InputStreamJSON = "stream-json"
)

// maxInputLine is the longest line of stream-json input ralph reads: a
// user message with a long paste in it, far below what would strain
// memory.
const maxInputLine = 16 << 20

// claudeInput reads Claude Code's stream-json input: the user messages
// (each a prompt, in order) and the SDK's control requests, which are
// answered on standard output at once, so a client that waits for the
// answer to its initialize request gets it before the first turn.
//
// Its goroutine is owned by the one-shot that started it: it ends when
// standard input ends (the SDK closes it once it has the last result) or
// cannot be read, and the process exits without waiting for it
// otherwise, since a read of standard input cannot be cut short.
type claudeInput struct {
	prompts chan string
}

// claudeUserLine is a line of stream-json input: a user message or a
// control request.
type claudeUserLine struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype string `json:"subtype"`
	} `json:"request"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// readClaudeInput starts reading r. reply writes a control response on
// standard output; note says something on standard error.
func readClaudeInput(r io.Reader, reply func(any), note func(string)) *claudeInput {
	// Messages sent while a run works wait here, so that a control
	// request after them is still answered at once.
	in := &claudeInput{prompts: make(chan string, 64)}
	go func() {
		defer close(in.prompts)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxInputLine)
		n := 0
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var l claudeUserLine
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				note(fmt.Sprintf("line %d of standard input is no JSON object (--input-format stream-json), so it was left out: %s", n, err))
				continue
			}
			switch l.Type {
			case "user":
				prompt, left := userPrompt(l.Message.Content)
				if left != "" {
					note(fmt.Sprintf("the user message on line %d had %s, which ralph's stream-json input does not take; its text was sent alone", n, left))
				}
				if prompt != "" {
					in.prompts <- prompt
				}
			case "control_request":
				reply(controlResponse(l.RequestID, l.Request.Subtype))
			case "control_response", "keep_alive":
				// Answers to requests ralph never makes, and signs of
				// life: nothing to do.
			default:
				note(fmt.Sprintf("line %d of standard input is a message of type %q, which ralph's stream-json input does not take (only user messages and control requests), so it was left out", n, l.Type))
			}
		}
		if err := sc.Err(); err != nil {
			note(fmt.Sprintf("standard input could not be read to its end (%s), so what came after was left out", err))
		}
	}()
	return in
}

// next waits for the next user message; ok is false once standard input
// has ended without one, or ctx is done.
func (in *claudeInput) next(ctx context.Context) (prompt string, ok bool) {
	select {
	case p, ok := <-in.prompts:
		return p, ok
	case <-ctx.Done():
		return "", false
	}
}

// userPrompt is the text of a user message's content: a string, or the
// text blocks of a list of blocks, one after the other; left names the
// kinds of other blocks it had (a block of type "image").
func userPrompt(content json.RawMessage) (prompt, left string) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, ""
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return "", "content that is neither text nor a list of blocks"
	}
	var texts, others []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		} else {
			others = append(others, fmt.Sprintf("a block of type %q", text.StripControls(b.Type)))
		}
	}
	return strings.Join(texts, "\n\n"), strings.Join(others, ", ")
}

// controlResponse answers a control request of Claude Code's SDK. ralph
// answers initialize (with no slash commands, agents, models or account,
// which it has none of in Claude Code's sense) and refuses every other
// request in one sentence: they steer Claude Code itself (its permission
// mode, its model, an interrupt), which `ralph stop` and ralph's own flags
// do here.
func controlResponse(id, subtype string) any {
	type response struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Response  any    `json:"response,omitempty"`
		Error     string `json:"error,omitempty"`
	}
	r := response{Subtype: "success", RequestID: id}
	if subtype == "initialize" {
		r.Response = map[string]any{"commands": []any{}, "agents": []any{}, "output_style": "default",
			"available_output_styles": []string{"default"}, "models": []any{}, "account": map[string]any{}}
	} else {
		r.Subtype = "error"
		r.Error = fmt.Sprintf("ralph does not take the control request %q; only initialize (ralph stop stops a run, and ralph's flags set its model and permissions)", subtype)
	}
	return struct {
		Type     string   `json:"type"`
		Response response `json:"response"`
	}{"control_response", r}
}
