package repl

import (
	"context"
	"errors"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// approvalAsker asks the approval policy's questions at the shell's own
// prompt, since only the shell reads the terminal. What is asked, what
// "always" remembers and where it is saved are the policy's
// (workers/approval); this only shows the question and reads the answer.
type approvalAsker struct {
	sh prompter
}

// prompter is what the asker needs of the shell: a question answered by
// the person's next line, and a place for a notice.
type prompter interface {
	Ask(ctx context.Context, question, prompt, what string) (string, bool)
	AskKey(ctx context.Context, question, prompt, what, keys string) (string, bool)
	note(text string, bad bool)
}

// errNoAnswer is a question left unanswered: a hard stop, or the shell
// leaving.
var errNoAnswer = errors.New("the question was not answered: the work was stopped or the shell is leaving")

// Ask implements approval.Asker.
func (a approvalAsker) Ask(ctx context.Context, q approval.Question) (approval.Answer, error) {
	// The job line names the call the way every face does (coordinator/eventwords);
	// starting a server is no call, so it says what the policy says.
	what := clipWidth(q.What(), 70)
	name, args := q.Call()
	if name != "" {
		what = eventwords.ToolCall(name, args)
	}
	// A command asked about has no "running" line yet (its tool_call
	// event says Asking): it gets one once it is allowed.
	allowed := func(ans approval.Answer) (approval.Answer, error) {
		if name == tools.ToolRunCommand && !ans.Refused() {
			a.sh.note(eventwords.GlyphTool+" "+what, false)
		}
		return ans, nil
	}
	ans, err := approval.Converse(ctx, shellPrompter{sh: a.sh, what: what}, q)
	if err != nil {
		return approval.No, err
	}
	return allowed(ans)
}

// shellPrompter puts the policy's questions at the shell's prompt; what
// names the call on the busy prompt while it waits.
type shellPrompter struct {
	sh   prompter
	what string
}

// AskKey implements approval.Prompter. The shell rings the bell at every
// question it shows, first or not.
func (p shellPrompter) AskKey(ctx context.Context, question, prompt, keys string, _ bool) (string, error) {
	line, ok := p.sh.AskKey(ctx, question, prompt, p.what, keys)
	return line, unanswered(ctx, ok)
}

// AskLine implements approval.Prompter.
func (p shellPrompter) AskLine(ctx context.Context, question, prompt string) (string, error) {
	line, ok := p.sh.Ask(ctx, question, prompt, p.what)
	return line, unanswered(ctx, ok)
}

// unanswered is the error of a question the shell returned without an
// answer: the context's end, or the shell leaving.
func unanswered(ctx context.Context, ok bool) error {
	if ok {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errNoAnswer
}

// Note implements approval.Noter.
func (a approvalAsker) Note(text string, bad bool) { a.sh.note(text, bad) }

// AskText implements approval.TextAsker: a model's question (ask_user) is
// shown as the model's line, and the person's next line is the answer.
// A hard stop (Ctrl-C) leaves it unanswered.
func (a approvalAsker) AskText(ctx context.Context, q tools.UserQuestion) (string, error) {
	line, ok := a.sh.Ask(ctx, q.Shown(), q.AnswerPrompt(), "a question for you")
	if !ok {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return "", errNoAnswer
	}
	return tools.ChoiceAnswer(q, line), nil
}
