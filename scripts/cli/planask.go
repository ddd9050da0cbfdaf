package cli

import (
	"context"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The plan's question (accept, revise, edit, drop), asked at the terminal
// and, through the session's questions, of ralph answer and ralph serve's
// page at once.

// planAnswer is an answer to the plan's question: a (accept), r (revise,
// with the words of what should change when they came with it), e (edit,
// at the terminal only), d (drop), or "" for a key it does not take.
type planAnswer struct{ key, words string }

// String is the answer as the answered event and the notices say it.
func (a planAnswer) String() string {
	switch a.key {
	case "a":
		return "accept"
	case "r":
		if a.words != "" {
			return "revise: " + a.words
		}
		return "revise"
	case "e":
		return "edit"
	case "d":
		return "drop"
	}
	return "?"
}

// planKey reads the terminal's answer (a key, or a word typed where keys
// cannot be read; an empty line accepts).
func planKey(s string) planAnswer {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "a", "accept", "y", "yes":
		return planAnswer{key: "a"}
	case "r", "revise":
		return planAnswer{key: "r"}
	case "e", "edit":
		return planAnswer{key: "e"}
	case "d", "drop":
		return planAnswer{key: "d"}
	}
	return planAnswer{}
}

// parsePlanAnswer reads an answer given from elsewhere (ralph answer,
// ralph serve's page): a, d, or r with what should change ("r: split
// task 3"); the editor is the terminal's alone.
func parsePlanAnswer(s string) (any, bool) {
	word, words, _ := strings.Cut(strings.TrimSpace(s), ":")
	if w, rest, found := strings.Cut(word, " "); found {
		word, words = w, rest+words
	}
	words = strings.Join(strings.Fields(words), " ")
	a := planKey(word)
	switch {
	case word == "":
		return nil, false
	case a.key == "r" && words != "":
		a.words = words
		return a, true
	case (a.key == "a" || a.key == "d") && words == "":
		return a, true
	}
	return nil, false
}

// planAsked is the answer askPlan got, and whether it came from the
// terminal.
type planAsked struct {
	answer   planAnswer
	terminal bool
	// note tells the terminal where an answer given elsewhere came from.
	note string
}

// askPlan asks the plan's question at the terminal and, through the
// session's questions (qs, nil without a control socket), of ralph answer
// and ralph serve's page at once: the first answer wins and the others
// see it answered, as for an approval.
func askPlan(ctx context.Context, face *OneShot, qs *control.Questions, p *project.Project, plan *tools.Plan) (planAsked, error) {
	term := func(ctx context.Context) (any, error) {
		choice, err := face.asks.askKey(ctx, face.showPlan(p, plan),
			"Accept the plan? [a]ccept, [r]evise, [e]dit, [d]rop:", planChoices, true)
		if err != nil {
			return nil, err
		}
		return planKey(choice), nil
	}
	if qs == nil {
		v, err := term(ctx)
		a, _ := v.(planAnswer)
		return planAsked{answer: a, terminal: true}, err
	}
	// The planning conversation has ended (completed); while its plan
	// waits for the person the session is live again (waiting_for_input),
	// so ralph status and ralph serve show it waiting and let it be
	// answered, and it is put back as it was once answered.
	was := p.Session.State().Status
	_ = p.Session.SaveState(func(st *memory.State) { st.Status = memory.StatusRunning })
	defer func() {
		_ = p.Session.SaveState(func(st *memory.State) {
			if st.Status == memory.StatusRunning {
				st.Status = was
			}
		})
	}()
	shown := text.StripControls(planMarkdown(p, plan)) +
		"\nAccept the plan? a (accept), r: WHAT (revise: say what should change), d (drop: the files are put back); e (edit) at the terminal"
	got, err := qs.Choose(ctx, "plan", shown, []string{"a", "r", "d"}, parsePlanAnswer,
		`answer a (accept), r and what should change ("r: split task 3") or d (drop)`, term)
	a, _ := got.Value.(planAnswer)
	return planAsked{answer: a, terminal: got.Terminal, note: got.Note}, err
}
