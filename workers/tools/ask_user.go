package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// AskUserParams are ask_user's arguments.
type AskUserParams struct {
	Question string   `json:"question" required:"true" description:"the question, complete and self-contained: the person may not have followed the work"`
	Choices  []string `json:"choices,omitempty" description:"the answers to choose from, if the answer is one of a few; the person may answer otherwise"`
}

// UserQuestion is a question a model asks the person (ask_user), and the
// agent that asks it.
type UserQuestion struct {
	Text    string
	Choices []string
	Agent   string
}

// UserAsker puts a model's question to the person; the approval policy
// implements it, so a question follows the one rule of who is asked and
// how long ralph waits.
type UserAsker interface {
	AskUser(ctx context.Context, q UserQuestion) (string, error)
}

// ErrNobodyToAsk is what a UserAsker returns when nobody can be asked
// (no terminal, CI, or no answer in time); its message says why.
var ErrNobodyToAsk = errors.New("nobody can answer")

// ErrNoAnswer is what a question returns when its time to wait for an
// answer ran out (--answer-timeout): the refusal then says how to wait
// longer, which helps there and nowhere else.
var ErrNoAnswer = errors.New("no answer came")

// Bounds of a question, so a model cannot fill the person's screen.
const (
	maxQuestion = 2000
	maxChoices  = 10
	maxChoice   = 200
)

// newAskUserTool is ask_user{question, choices?}: the model asks the
// person, and the answer, or word that none came, is the tool's result.
func newAskUserTool(asker UserAsker) Tool {
	return NewTool(Def("ask_user"), func(ctx context.Context, args json.RawMessage) workers.Result {
		var a AskUserParams
		if err := json.Unmarshal(args, &a); err != nil {
			return workers.Result{IsError: true, Output: "ask_user needs {\"question\": \"...\", \"choices\": [...]}: " + err.Error()}
		}
		q, bad := userQuestion(a)
		if bad != "" {
			return workers.Result{IsError: true, Output: bad}
		}
		q.Agent = CallerOf(ctx).Agent
		answer, err := asker.AskUser(ctx, q)
		switch {
		case err != nil && ctx.Err() != nil:
			return workers.Result{Output: "not answered: the person stopped the work before answering"}
		case err != nil:
			return workers.Result{Output: fmt.Sprintf("no answer (%v): decide yourself, and say in your answer what you assumed", err)}
		case strings.TrimSpace(answer) == "":
			return workers.Result{Output: "the person gave an empty answer: decide yourself, and say in your answer what you assumed"}
		}
		return workers.Result{Output: "the person answered: " + answer}
	})
}

// userQuestion checks a's question and choices, or says what is wrong.
func userQuestion(a AskUserParams) (UserQuestion, string) {
	// The question reaches the person's terminal: the model's text never
	// drives it (escape sequences and control characters are removed).
	q := UserQuestion{Text: strings.TrimSpace(text.StripControls(a.Question))}
	switch {
	case q.Text == "":
		return q, "ask_user needs a question"
	case len(q.Text) > maxQuestion:
		return q, fmt.Sprintf("the question is %d bytes; ask a shorter one (at most %d)", len(q.Text), maxQuestion)
	case len(a.Choices) > maxChoices:
		return q, fmt.Sprintf("%d choices; give at most %d", len(a.Choices), maxChoices)
	}
	for _, c := range a.Choices {
		c = strings.Join(strings.Fields(text.StripControls(c)), " ")
		if c == "" || len(c) > maxChoice {
			return q, fmt.Sprintf("each choice must be a short line (at most %d bytes)", maxChoice)
		}
		q.Choices = append(q.Choices, c)
	}
	return q, ""
}

// ChoiceAnswer is the answer a person typed to q: a choice's number
// stands for the choice, anything else is their own words.
func ChoiceAnswer(q UserQuestion, typed string) string {
	typed = strings.TrimSpace(typed)
	var n int
	if _, err := fmt.Sscanf(typed, "%d", &n); err == nil && fmt.Sprint(n) == typed && n >= 1 && n <= len(q.Choices) {
		return q.Choices[n-1]
	}
	return typed
}

// Shown is the question as every face shows it: who asks, the question,
// and the choices numbered, so that any face (the chat shell, a one-shot's
// terminal, ralph watch and ralph answer) reads the same.
func (q UserQuestion) Shown() string {
	who := "the model asks"
	if q.Agent != "" && q.Agent != "main" {
		who = "agent " + q.Agent + " asks"
	}
	var b strings.Builder
	b.WriteString(who + ": " + q.Text)
	for i, c := range q.Choices {
		fmt.Fprintf(&b, "\n  %d. %s", i+1, c)
	}
	return b.String()
}

// AnswerPrompt is the prompt for q's answer.
func (q UserQuestion) AnswerPrompt() string {
	if len(q.Choices) > 0 {
		return fmt.Sprintf("your answer (1-%d or words) ›", len(q.Choices))
	}
	return "your answer ›"
}
