package workers

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

func TestStaticApprovers(t *testing.T) {
	ctx := context.Background()
	if d := AllowAll.ApproveCommand(ctx, "rm -rf /tmp/x"); !d.Allowed {
		t.Fatal("AllowAll refused")
	}
	d := DenyNoTerminal.ApproveCommand(ctx, "ls")
	if d.Allowed || d.Reason != "run_command needs approval and no terminal is attached to ask; rerun ralph with --yes (-y) to allow commands" {
		t.Fatalf("DenyNoTerminal = %+v", d)
	}
	if !strings.HasSuffix(d.Reason, ApprovalHint) {
		t.Fatal("reason does not end with ApprovalHint")
	}
}

func TestPromptApproverAnswers(t *testing.T) {
	ctx := context.Background()
	for input, allowed := range map[string]bool{
		"y\n":          true,
		"YES\n":        true,
		" yes \r\n":    true,
		"n\n":          false,
		"no\n":         false,
		"\n":           false, // no is the default
		"maybe\ny\n":   true,  // an unclear answer is asked again
		"y":            true,  // a final line without newline still counts
		"":             false, // closed input
		"what\nhuh\n":  false, // closed before a clear answer
		"always\nn\n":  true,
		"a\n":          true,
		"sure\nnope\n": false,
	} {
		out := &text.LockedBuffer{}
		p := &PromptApprover{In: strings.NewReader(input), Out: out}
		d := p.ApproveCommand(ctx, "go test ./...")
		if d.Allowed != allowed {
			t.Errorf("input %q: allowed=%v (%q), want %v", input, d.Allowed, d.Reason, allowed)
		}
		if !d.Allowed && d.Reason == "" {
			t.Errorf("input %q: refusal without a reason", input)
		}
		if !strings.Contains(out.String(), "ralph wants to run:\n  go test ./...\nAllow? [y]es / [N]o / [a]lways allow \"go\" commands: ") {
			t.Errorf("input %q: prompt was %q", input, out.String())
		}
	}
}

func TestPromptApproverDeclineAndClosedReasons(t *testing.T) {
	ctx := context.Background()
	p := &PromptApprover{In: strings.NewReader("n\n"), Out: io.Discard}
	if d := p.ApproveCommand(ctx, "ls"); d.Reason != "the user declined to run this command" {
		t.Fatalf("decline reason %q", d.Reason)
	}
	// The input is now exhausted.
	if d := p.ApproveCommand(ctx, "ls"); d.Allowed || !strings.Contains(d.Reason, ApprovalHint) {
		t.Fatalf("closed input: %+v", d)
	}
}

func TestPromptApproverAlways(t *testing.T) {
	ctx := context.Background()
	out := &text.LockedBuffer{}
	p := &PromptApprover{In: strings.NewReader("a\nn\n"), Out: out}
	if d := p.ApproveCommand(ctx, "go test ./..."); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	asked := strings.Count(out.String(), "ralph wants to run")
	// Same first word: approved without asking (and without reading input).
	if d := p.ApproveCommand(ctx, "go   build ./cmd/ralph"); !d.Allowed {
		t.Fatalf("same first word: %+v", d)
	}
	if n := strings.Count(out.String(), "ralph wants to run"); n != asked {
		t.Fatalf("asked again for an always-approved word")
	}
	// Another first word is asked about and gets the next line, "n".
	if d := p.ApproveCommand(ctx, "gofmt -w ."); d.Allowed {
		t.Fatal("a different first word was approved without asking")
	}
}

func TestPromptApproverCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := &PromptApprover{In: pr, Out: &text.LockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Decision, 1)
	go func() { done <- p.ApproveCommand(ctx, "make") }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case d := <-done:
		if d.Allowed || d.Reason != "cancelled" {
			t.Fatalf("cancelled decision: %+v", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("ApproveCommand ignored cancellation")
	}
	// The read left pending answers the next question.
	go pw.Write([]byte("y\n"))
	if d := p.ApproveCommand(context.Background(), "make test"); !d.Allowed {
		t.Fatalf("next question after cancel: %+v", d)
	}
}

// TestPromptApproverSerialises checks that concurrent questions are asked one
// at a time and each consumes exactly one answer.
func TestPromptApproverSerialises(t *testing.T) {
	out := &text.LockedBuffer{}
	p := &PromptApprover{In: strings.NewReader("y\nn\ny\nn\n"), Out: out}
	var wg sync.WaitGroup
	results := make(chan bool, 4)
	for _, cmd := range []string{"a1", "b2", "c3", "d4"} {
		wg.Go(func() { results <- p.ApproveCommand(context.Background(), cmd).Allowed })
	}
	wg.Wait()
	close(results)
	yes := 0
	for r := range results {
		if r {
			yes++
		}
	}
	if yes != 2 {
		t.Fatalf("%d approvals, want 2", yes)
	}
	if n := strings.Count(out.String(), "ralph wants to run"); n != 4 {
		t.Fatalf("%d prompts, want 4:\n%s", n, out.String())
	}
	// Every prompt is followed by its own question line before the next one.
	for _, chunk := range strings.Split(out.String(), "ralph wants to run:")[1:] {
		if strings.Count(chunk, "Allow?") != 1 {
			t.Fatalf("interleaved prompts:\n%s", out.String())
		}
	}
}

func TestPromptApproverWaitingForTurnHonoursCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := &PromptApprover{In: pr, Out: io.Discard}
	first := make(chan Decision, 1)
	go func() { first <- p.ApproveCommand(context.Background(), "one") }()
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if d := p.ApproveCommand(ctx, "two"); d.Allowed || d.Reason != "cancelled" {
		t.Fatalf("second question: %+v", d)
	}
	pw.Write([]byte("y\n"))
	if d := <-first; !d.Allowed {
		t.Fatalf("first question: %+v", d)
	}
}
