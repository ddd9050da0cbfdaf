package slash

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// spendingCoord is a conversation that can be compacted and says what it
// spent.
type spendingCoord struct {
	fakeCoord
	focus string
	cost  *float64
}

func (s *spendingCoord) Usage() conversation.Usage {
	return conversation.Usage{InputTokens: 12345, OutputTokens: 67}
}
func (s *spendingCoord) Cost() *float64    { return s.cost }
func (s *spendingCoord) SessionID() string { return "s1" }
func (s *spendingCoord) Compact(_ context.Context, focus string) (coordinator.Compacted, error) {
	s.focus = focus
	return coordinator.Compacted{Summary: "## Decisions\nnone", Compaction: conversation.Compaction{Kept: 2, BeforeTokens: 9000, AfterTokens: 1200}}, nil
}

// /cost says the session's tokens and cost as ralph status does; an
// unknown price is said, not shown as $0.
func TestCost(t *testing.T) {
	h, out, _ := host(t)
	price := 0.25
	sc := &spendingCoord{fakeCoord: fakeCoord{model: "m1"}, cost: &price}
	h.Coord = sc
	if _, err := Dispatch(context.Background(), h, "/cost"); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "session s1: 12,345 in / 67 out, cost $0.25\n" {
		t.Fatalf("/cost printed %q", got)
	}
	out.Reset()
	sc.cost = nil
	if _, err := Dispatch(context.Background(), h, "/cost"); err != nil || !strings.Contains(out.String(), "cost unknown (no price is known for m1)") {
		t.Fatalf("/cost without a price: %v %q", err, out.String())
	}
	if _, err := Dispatch(context.Background(), h, "/cost now"); err == nil {
		t.Fatal("/cost took an argument")
	}
}

// /compact is a job that compacts with the focus given and says what it
// did; it is refused while ralph works and where no conversation is open.
func TestCompact(t *testing.T) {
	h, _, _ := host(t)
	sc := &spendingCoord{fakeCoord: fakeCoord{model: "m1"}}
	h.Coord = sc
	o, err := Dispatch(context.Background(), h, "/compact the parser")
	if err != nil || o.Job == nil {
		t.Fatalf("/compact: %+v %v", o, err)
	}
	text, err := o.Job(context.Background())
	if err != nil || sc.focus != "the parser" || !strings.Contains(text, "## Decisions") || !strings.Contains(text, "about 1,200 tokens instead of 9,000") {
		t.Fatalf("the job: %q %v (focus %q)", text, err, sc.focus)
	}
	h.Busy = func() bool { return true }
	if _, err := Dispatch(context.Background(), h, "/compact"); err == nil || !strings.Contains(err.Error(), "working") {
		t.Fatalf("/compact while busy: %v", err)
	}
	h.Busy, h.Coord = nil, &fakeCoord{}
	if _, err := Dispatch(context.Background(), h, "/compact"); err == nil {
		t.Fatal("/compact without a conversation ran")
	}
}
