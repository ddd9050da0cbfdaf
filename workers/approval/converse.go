package approval

import (
	"context"
	"strings"
)

// Prompter puts a question to the person on one face: the chat shell at
// its prompt, the one-shot on the terminal. Converse holds what every
// face does with the answers, so they all answer the same way.
type Prompter interface {
	// AskKey shows question and prompt and returns the key pressed, one
	// of keys, without Enter; where keys cannot be read one by one, the
	// line typed. first is true the first time the question is shown,
	// when the face calls the person to it (the bell).
	AskKey(ctx context.Context, question, prompt, keys string, first bool) (string, error)
	// AskLine asks for words, on a line of their own.
	AskLine(ctx context.Context, question, prompt string) (string, error)
}

// Converse asks q on p until it has an answer: HelpKey shows Help and
// asks again, an answer Parse does not take is asked about again with
// Retry (a line typed where keys cannot be read), and TellWhy asks for
// the words the model is told on a line of their own; a line left
// unanswered there is a plain no.
func Converse(ctx context.Context, p Prompter, q Question) (Answer, error) {
	text, first := q.Text(), true
	for {
		line, err := p.AskKey(ctx, text, q.Prompt(), q.AllKeys(), first)
		if err != nil {
			return No, err
		}
		first = false
		if strings.TrimSpace(line) == HelpKey {
			text = q.Help()
			continue
		}
		ans, ok := q.Parse(line)
		if !ok {
			text = q.Retry()
			continue
		}
		if ans != TellWhy {
			return ans, nil
		}
		why, err := p.AskLine(ctx, "what should ralph be told?", TellPrompt)
		if err != nil && ctx.Err() != nil {
			return No, ctx.Err()
		}
		return NoBecause(why), nil
	}
}
