package control

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// QuestionStore records the question a session waits on; *memory.Session
// implements it.
type QuestionStore interface {
	SetQuestion(q *memory.Question) error
}

// Questions puts the questions a running ralph asks where anyone who may
// answer sees them: the session says waiting_for_input and carries the
// question (ralph status, ralph watch), a question event goes out, and the
// answer comes from its terminal, when it has one, or from ralph answer,
// whichever is first. What is asked and what an answer means stay the
// approval policy's (workers/approval): this only carries questions and
// answers. One question waits at a time; the next waits its turn.
type Questions struct {
	store   QuestionStore
	publish func(event.Event)
	// notify tells the person watching the output that a question waits
	// and how to answer it, when there is no terminal to ask at.
	notify func(string)

	turn chan struct{}
	mu   sync.Mutex // guards the fields below and notify
	next int
	wait *waiting
	// limit is how long a question nobody at a terminal can answer waits
	// for ralph answer (0: no limit); see SetLimit.
	limit time.Duration
}

// ErrNoAnswer is what a question returns when its time to wait for ralph
// answer ran out; the caller takes it as a refusal and goes on.
var ErrNoAnswer = tools.ErrNoAnswer

// SetLimit sets how long a question waits for ralph answer when there is
// no terminal to ask at (--answer-timeout); 0 waits for as long as the
// run lasts. A question asked at a terminal waits for the person there.
func (h *Questions) SetLimit(d time.Duration) {
	h.mu.Lock()
	h.limit = d
	h.mu.Unlock()
}

// waiting is the question being asked now.
type waiting struct {
	q     memory.Question
	parse func(string) (any, bool)
	// subject is the question in a line, without the keys a terminal
	// takes ("run `make`"): ralph answer's reply names it. retry is what
	// to say to an answer parse refuses: the words ralph answer takes.
	subject, retry string
	settled        bool
	answer         chan answered
}

type answered struct {
	v    any
	err  error
	from string
}

// Where an answer came from, as the answered event says.
const (
	fromTerminal = "the terminal"
	fromSocket   = "ralph answer"
	fromPage     = "ralph serve's page"
)

// FromWeb is Request.From of an answer given in ralph serve's page.
const FromWeb = "web"

// answeredNote is what the person at the terminal is told of question id
// answered elsewhere (from: where, as the answered event says it).
func answeredNote(id int, from string, v any) string {
	where := "from another terminal"
	if from == fromPage {
		where = "in ralph serve's page"
	}
	return fmt.Sprintf("question #%d answered %s: %s", id, where, answerWord(v))
}

// NewQuestions returns the questions of one session. publish sends an
// event into the run's event stream; notify (nil: nowhere) prints a line
// for the person following the output.
func NewQuestions(store QuestionStore, publish func(event.Event), notify func(string)) *Questions {
	if notify == nil {
		notify = func(string) {}
	}
	return &Questions{store: store, publish: publish, notify: notify, turn: make(chan struct{}, 1)}
}

// SetNotify changes where the line about a waiting question goes, when
// another face takes over.
func (h *Questions) SetNotify(notify func(string)) {
	if notify == nil {
		notify = func(string) {}
	}
	h.mu.Lock()
	h.notify = notify
	h.mu.Unlock()
}

func (h *Questions) note(s string) {
	h.mu.Lock()
	n := h.notify
	h.mu.Unlock()
	n(s)
}

// Waiting is the question waiting for an answer, if any.
func (h *Questions) Waiting() *memory.Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.wait == nil {
		return nil
	}
	q := h.wait.q
	return &q
}

// ask shows q wherever it can be answered and returns the first answer:
// term's (nil: no terminal) or one given with Answer, with where it came
// from and the question's number.
func (h *Questions) ask(ctx context.Context, q memory.Question, parse func(string) (any, bool), subject, retry string,
	term func(ctx context.Context) (any, error)) (answered, int, error) {
	select {
	case h.turn <- struct{}{}:
		defer func() { <-h.turn }()
	case <-ctx.Done():
		return answered{}, 0, ctx.Err()
	}
	w := &waiting{q: q, parse: parse, subject: subject, retry: retry, answer: make(chan answered, 2)}
	h.mu.Lock()
	limit := h.limit
	if term != nil {
		limit = 0
	}
	h.next++
	w.q.ID, w.q.Since = h.next, time.Now().UTC()
	h.wait = w
	h.mu.Unlock()
	_ = h.store.SetQuestion(&w.q)
	h.emit(event.Event{Type: event.Question, Question: &w.q})
	if term == nil {
		h.note(WaitingNote(w.q, limit))
	}
	if limit > 0 {
		timer := time.AfterFunc(limit, func() {
			h.settle(w, answered{err: fmt.Errorf("%w within %s", ErrNoAnswer, limit)})
		})
		defer timer.Stop()
	}
	tctx, cancel := context.WithCancel(ctx)
	termDone := make(chan struct{})
	if term != nil {
		go func() {
			defer close(termDone)
			v, err := term(tctx)
			h.settle(w, answered{v: v, err: err, from: fromTerminal})
		}()
	} else {
		close(termDone)
	}
	var a answered
	select {
	case a = <-w.answer:
	case <-ctx.Done():
		a = answered{err: ctx.Err()}
		h.settle(w, a)
	}
	// The terminal's question is withdrawn once the answer came from
	// elsewhere; it returns at once when its context ends.
	cancel()
	<-termDone
	h.mu.Lock()
	h.wait = nil
	h.mu.Unlock()
	_ = h.store.SetQuestion(nil)
	if a.err == nil {
		h.emit(event.Event{Type: event.Answered, Question: &w.q, Text: answerWord(a.v), Output: a.from})
	}
	return a, w.q.ID, a.err
}

// settle delivers the first answer to w; later ones are ignored. It
// reports whether this one was first.
func (h *Questions) settle(w *waiting, a answered) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.settled {
		return false
	}
	w.settled = true
	w.answer <- a
	return true
}

func (h *Questions) emit(ev event.Event) {
	if h.publish == nil {
		return
	}
	ev.Time = time.Now()
	ev.AgentID = event.MainAgent
	h.publish(ev)
}

// Answer gives the waiting question an answer from another terminal. id,
// when not 0, names the question the person saw; any other is left alone.
func (h *Questions) Answer(id int, text string) Reply { return h.AnswerFrom(id, text, "") }

// AnswerFrom is Answer given where from says (Request.From: "" for ralph
// answer, FromWeb for ralph serve's page); any other word counts as ralph
// answer, so a client cannot put its own words into the record.
func (h *Questions) AnswerFrom(id int, text, from string) Reply {
	src := fromSocket
	if from == FromWeb {
		src = fromPage
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.wait
	switch {
	case w == nil || w.settled:
		return NotDone("no question is waiting for an answer")
	case id != 0 && id != w.q.ID:
		return NotDone("question #%d is no longer waiting; the question now is #%d: %s\nanswer it with: %s", id, w.q.ID, w.subject, w.q.AnswerCommand())
	}
	v, ok := w.parse(text)
	if !ok {
		return Reply{Bad: true, Text: fmt.Sprintf("%q does not answer question #%d: %s", text, w.q.ID, w.retry)}
	}
	w.settled = true
	w.answer <- answered{v: v, from: src}
	// The question in a line: its text as a terminal shows it names keys
	// ([y]es, ? explains) that mean nothing to ralph answer.
	return Done("answered %s to question #%d: %s", answerWord(v), w.q.ID, w.subject)
}

// firstLine is a question's first line, what ralph answer's reply names.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// answerWord is an answer as people say it.
func answerWord(v any) string {
	switch a := v.(type) {
	case approval.Answer:
		return a.Word()
	case bool:
		if a {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v)
}

// Asker is the approval policy's asker for this run: term's question at
// the terminal (nil: none) raced against ralph answer. The question and
// the answers it takes are the policy's own (approval.Question), so
// "always" means from another terminal exactly what it means at this one.
func (h *Questions) Asker(term approval.Asker) approval.Asker { return asker{h: h, term: term} }

type asker struct {
	h    *Questions
	term approval.Asker
}

func (a asker) Ask(ctx context.Context, q approval.Question) (approval.Answer, error) {
	// t (no, and tell it why) is taken from another terminal or the web
	// page as "t: the words", which q.Parse reads as the terminal does.
	answers := []string{"y", "n", "t"}
	if q.CanAlways() {
		answers = append(answers, "always")
	}
	if q.CanShare() {
		answers = append(answers, "project")
	}
	mq := memory.Question{Kind: "approval", Text: q.Text(), Plain: q.Plain(), Details: q.PlainHelp(), Answers: answers}
	parse := func(s string) (any, bool) { return q.Parse(s) }
	var term func(context.Context) (any, error)
	if a.term != nil {
		term = func(ctx context.Context) (any, error) { return a.term.Ask(ctx, q) }
	}
	got, id, err := a.h.ask(ctx, mq, parse, q.What(), "answer "+q.Arguments(), term)
	if err != nil {
		return approval.No, err
	}
	if n, ok := a.term.(approval.Noter); ok && got.from != fromTerminal {
		// The person at the terminal saw the question; they see it was
		// answered elsewhere.
		n.Note(answeredNote(id, got.from, got.v), false)
	}
	ans, _ := got.v.(approval.Answer)
	return ans, nil
}

// Note implements approval.Noter: the terminal's notice where there is
// one, else the line for the person following the output.
func (a asker) Note(text string, bad bool) {
	if n, ok := a.term.(approval.Noter); ok {
		n.Note(text, bad)
		return
	}
	a.h.note(text)
}

// Confirmer is a yes/no question of the task loop (the budget, the
// circuit breaker): term asks at the terminal (nil: none), ralph answer
// from another; no answer is no.
func (h *Questions) Confirmer(term func(context.Context, string) bool) func(context.Context, string) bool {
	return func(ctx context.Context, question string) bool {
		mq := memory.Question{Kind: "confirm", Text: question + " [y/N]", Plain: question, Answers: []string{"y", "n"}}
		parse := func(s string) (any, bool) {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "y", "yes":
				return true, true
			case "n", "no":
				return false, true
			}
			return nil, false
		}
		var t func(context.Context) (any, error)
		if term != nil {
			t = func(ctx context.Context) (any, error) {
				ok := term(ctx, question)
				if !ok && ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return ok, nil
			}
		}
		got, _, err := h.ask(ctx, mq, parse, question, "answer y (yes) or n (no)", t)
		yes, _ := got.v.(bool)
		return err == nil && yes
	}
}

// AskText implements approval.TextAsker: a model's question (ask_user)
// asked at the terminal, when there is one that takes it, raced against
// ralph answer, which takes the person's words or a choice's number.
func (a asker) AskText(ctx context.Context, q tools.UserQuestion) (string, error) {
	text := q.Shown()
	if len(q.Choices) > 0 {
		text += "\n(answer with a choice's number or in your own words)"
	}
	mq := memory.Question{Kind: "ask_user", Text: text}
	parse := func(s string) (any, bool) {
		if strings.TrimSpace(s) == "" {
			return nil, false
		}
		return tools.ChoiceAnswer(q, s), true
	}
	var term func(context.Context) (any, error)
	if ta, ok := a.term.(approval.TextAsker); ok {
		term = func(ctx context.Context) (any, error) { return ta.AskText(ctx, q) }
	}
	got, id, err := a.h.ask(ctx, mq, parse, firstLine(text), "give your answer in words, or a choice's number", term)
	if err != nil {
		return "", err
	}
	if n, ok := a.term.(approval.Noter); ok && got.from != fromTerminal {
		n.Note(answeredNote(id, got.from, got.v), false)
	}
	s, _ := got.v.(string)
	return s, nil
}

// Chosen is the answer Choose got.
type Chosen struct {
	// Value is what the terminal's question or parse made of the answer.
	Value any
	// ID is the question's number.
	ID int
	// Terminal is whether the answer came from the terminal; else it came
	// from ralph answer or ralph serve's page, and Note says which.
	Terminal bool
	// Note is what to tell the person at the terminal of an answer given
	// elsewhere.
	Note string
}

// Choose asks a question of kind (a plan's "plan") whose answers are the
// keys in answers: term asks it at the terminal (nil: none), raced
// against ralph answer and ralph serve's page, whose answer parse reads
// (a key, or a key and words, "r: split task 3"); retry says what parse
// takes. The first answer wins and the others are withdrawn, as for an
// approval; what the answers mean stays the caller's.
func (h *Questions) Choose(ctx context.Context, kind, text string, answers []string,
	parse func(string) (any, bool), retry string, term func(context.Context) (any, error)) (Chosen, error) {
	mq := memory.Question{Kind: kind, Text: text, Answers: answers}
	got, id, err := h.ask(ctx, mq, parse, firstLine(text), retry, term)
	if err != nil {
		return Chosen{ID: id}, err
	}
	return Chosen{Value: got.v, ID: id, Terminal: got.from == fromTerminal, Note: answeredNote(id, got.from, got.v)}, nil
}

// WaitingNote is the note a question nobody can be asked at a terminal
// leaves where the person will read it: how long it waits (limit, 0 for
// no limit) and the command that answers it from another terminal. A
// run on Temporal says the same of its workflow's question.
func WaitingNote(q memory.Question, limit time.Duration) string {
	how := "waiting for an answer"
	if limit > 0 {
		how = fmt.Sprintf("waiting up to %s for an answer", limit)
	}
	return fmt.Sprintf("%s to question #%d:\n%s\nanswer from another terminal: %s", how, q.ID, q.Text, q.AnswerCommand())
}
