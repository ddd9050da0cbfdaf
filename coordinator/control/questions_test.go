package control

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/approval"
)

// questionLog records what a session would show.
type questionLog struct {
	mu     sync.Mutex
	shown  []*memory.Question
	events []event.Event
}

func (l *questionLog) SetQuestion(q *memory.Question) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shown = append(l.shown, q)
	return nil
}

func (l *questionLog) publish(ev event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// waitingQuestion waits until h has a question out.
func waitingQuestion(t *testing.T, h *Questions) *memory.Question {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q := h.Waiting(); q != nil {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatal("no question came")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestApprovalAnsweredFromAnotherTerminal(t *testing.T) {
	log := &questionLog{}
	var notes []string
	h := NewQuestions(log, log.publish, func(s string) { notes = append(notes, s) })
	q := approval.Question{Command: "make \x1b[31mtest", Remember: []string{"make test"}}
	got := make(chan approval.Answer, 1)
	go func() {
		a, err := h.Asker(nil).Ask(context.Background(), q)
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	w := waitingQuestion(t, h)
	if w.Text != q.Text() || strings.Contains(w.Text, "\x1b") || strings.Join(w.Answers, ",") != "y,n,t,always,project" || w.Kind != "approval" {
		t.Fatalf("the waiting question is %+v; the terminal would show %q", w, q.Text())
	}
	if r := h.Answer(w.ID+1, "y"); r.OK || !strings.Contains(r.Text, "no longer waiting") {
		t.Fatalf("an answer for another question: %+v", r)
	}
	if r := h.Answer(w.ID, "maybe"); r.OK || !r.Bad {
		t.Fatalf("a bad answer: %+v", r)
	}
	r := h.Answer(w.ID, "always")
	if !r.OK || !strings.Contains(r.Text, "answered always to question #1") {
		t.Fatalf("the answer: %+v", r)
	}
	if a := <-got; a != approval.Always {
		t.Fatalf("the policy got %v, want always", a)
	}
	if r := h.Answer(0, "y"); r.OK {
		t.Fatalf("a second answer: %+v", r)
	}
	if len(log.shown) != 2 || log.shown[0] == nil || log.shown[1] != nil {
		t.Fatalf("the session showed %v; want the question, then none", log.shown)
	}
	if len(log.events) != 2 || log.events[0].Type != event.Question || log.events[1].Type != event.Answered ||
		log.events[1].Text != "always" || log.events[1].Output != "ralph answer" {
		t.Fatalf("events: %+v", log.events)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ralph answer --id 1 y|n|t|always") {
		t.Fatalf("the person following the output was told %q", notes)
	}
}

// TestAlwaysOnlyWhereOffered: a command that is asked about every time
// takes no "always" from another terminal either.
func TestAlwaysOnlyWhereOffered(t *testing.T) {
	h := NewQuestions(&questionLog{}, nil, nil)
	q := approval.Question{Command: "curl x | sh", Why: []string{"it pipes into a shell"}}
	got := make(chan approval.Answer, 1)
	go func() {
		a, _ := h.Asker(nil).Ask(context.Background(), q)
		got <- a
	}()
	w := waitingQuestion(t, h)
	if strings.Join(w.Answers, ",") != "y,n,t" {
		t.Fatalf("answers offered: %v", w.Answers)
	}
	if r := h.Answer(w.ID, "always"); r.OK || !r.Bad {
		t.Fatalf("always where it is not offered: %+v", r)
	}
	if r := h.Answer(w.ID, "n"); !r.OK {
		t.Fatalf("%+v", r)
	}
	if a := <-got; a != approval.No {
		t.Fatalf("got %v", a)
	}
}

// termAsker answers at a terminal once told to, or gives up with ctx.
type termAsker struct {
	answer chan approval.Answer
	ended  chan error
	notes  chan string
}

func (a termAsker) Note(text string, _ bool) { a.notes <- text }

func (a termAsker) Ask(ctx context.Context, _ approval.Question) (approval.Answer, error) {
	select {
	case v := <-a.answer:
		return v, nil
	case <-ctx.Done():
		a.ended <- ctx.Err()
		return approval.No, ctx.Err()
	}
}

// TestTerminalAndSocketRace: whichever answers first decides; the other
// is withdrawn.
func TestTerminalAndSocketRace(t *testing.T) {
	log := &questionLog{}
	h := NewQuestions(log, log.publish, nil)
	term := termAsker{answer: make(chan approval.Answer), ended: make(chan error, 1), notes: make(chan string, 4)}
	got := make(chan approval.Answer, 1)
	go func() {
		a, _ := h.Asker(term).Ask(context.Background(), approval.Question{Command: "ls", Remember: []string{"ls"}})
		got <- a
	}()
	w := waitingQuestion(t, h)
	if r := h.Answer(w.ID, "n"); !r.OK {
		t.Fatalf("%+v", r)
	}
	if a := <-got; a != approval.No {
		t.Fatalf("got %v", a)
	}
	if err := <-term.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the terminal's question was not withdrawn: %v", err)
	}
	if note := <-term.notes; note != "question #1 answered from another terminal: no" {
		t.Fatalf("the terminal was told %q", note)
	}
	// And the terminal first.
	go func() {
		a, _ := h.Asker(term).Ask(context.Background(), approval.Question{Command: "ls", Remember: []string{"ls"}})
		got <- a
	}()
	waitingQuestion(t, h)
	term.answer <- approval.Yes
	if a := <-got; a != approval.Yes {
		t.Fatalf("got %v", a)
	}
	if ev := log.events[len(log.events)-1]; ev.Type != event.Answered || ev.Output != "the terminal" {
		t.Fatalf("last event %+v", ev)
	}
	if len(term.notes) != 0 {
		t.Fatalf("the terminal was told of its own answer: %q", <-term.notes)
	}
}

// TestQuestionEndsWithTheWork: a stop while a question waits ends it;
// the session no longer shows it.
func TestQuestionEndsWithTheWork(t *testing.T) {
	log := &questionLog{}
	h := NewQuestions(log, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.Asker(nil).Ask(ctx, approval.Question{Command: "ls"})
		errc <- err
	}()
	waitingQuestion(t, h)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if h.Waiting() != nil || log.shown[len(log.shown)-1] != nil {
		t.Fatal("the question outlived the work")
	}
	if r := h.Answer(0, "y"); r.OK {
		t.Fatalf("an answer after the stop: %+v", r)
	}
}

func TestConfirmer(t *testing.T) {
	h := NewQuestions(&questionLog{}, nil, nil)
	got := make(chan bool, 1)
	go func() { got <- h.Confirmer(nil)(context.Background(), "the cost limit is reached. Allow more?") }()
	w := waitingQuestion(t, h)
	if w.Kind != "confirm" || !strings.HasSuffix(w.Text, "[y/N]") {
		t.Fatalf("%+v", w)
	}
	if r := h.Answer(0, "always"); !r.Bad {
		t.Fatalf("%+v", r)
	}
	h.Answer(0, "yes")
	if !<-got {
		t.Fatal("yes was not yes")
	}
}

// TestChooseRacesTheTerminal: a question of keys (a plan's) waits at the
// terminal and for ralph answer at once; an answer ralph answer gives,
// read by the caller's parse, wins, the terminal's question is withdrawn,
// and the answered event and the terminal's note say where the answer
// came from (ralph serve's page here).
func TestChooseRacesTheTerminal(t *testing.T) {
	log := &questionLog{}
	h := NewQuestions(log, log.publish, nil)
	parse := func(s string) (any, bool) {
		k, words, _ := strings.Cut(s, ":")
		if k == "r" && strings.TrimSpace(words) == "" {
			return nil, false
		}
		return strings.TrimSpace(s), k == "a" || k == "r" || k == "d"
	}
	withdrawn := make(chan struct{})
	term := func(ctx context.Context) (any, error) {
		<-ctx.Done()
		close(withdrawn)
		return nil, ctx.Err()
	}
	got := make(chan Chosen, 1)
	go func() {
		c, err := h.Choose(context.Background(), "plan", "the plan", []string{"a", "r", "d"}, parse, "a, r: WHAT or d", term)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	w := waitingQuestion(t, h)
	if w.Kind != "plan" || strings.Join(w.Answers, ",") != "a,r,d" {
		t.Fatalf("the waiting question is %+v", w)
	}
	if r := h.Answer(w.ID, "r"); r.OK || !r.Bad {
		t.Fatalf("r without words: %+v", r)
	}
	if r := h.AnswerFrom(w.ID, "r: split task 3", FromWeb); !r.OK {
		t.Fatalf("r with words: %+v", r)
	}
	c := <-got
	<-withdrawn
	if c.Value != "r: split task 3" || c.Terminal || c.ID != w.ID || c.Note != "question #1 answered in ralph serve's page: r: split task 3" {
		t.Fatalf("chosen %+v", c)
	}
	log.mu.Lock()
	last := log.events[len(log.events)-1]
	log.mu.Unlock()
	if last.Type != event.Answered || last.Output != "ralph serve's page" {
		t.Fatalf("the answered event is %+v", last)
	}
	if h.Waiting() != nil {
		t.Fatal("the question still waits")
	}
}
