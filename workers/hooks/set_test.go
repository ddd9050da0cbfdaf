package hooks

import (
	"context"
	"testing"
)

func TestSetSettlesPendingOnce(t *testing.T) {
	guard := Hook{Event: PreToolUse, Matcher: "Bash", Command: "guard", Source: SourceProject}
	post := Hook{Event: PostToolUse, Matcher: "Write", Command: "fmt", Source: SourceProject}
	ok := Hook{Event: SessionStart, Command: "hello", Source: SourceProject}
	asked, settled := 0, 0
	s := &Set{Pending: []Hook{guard, post, ok}, Approve: func(_ context.Context, h Hook) bool {
		asked++
		return h.Command == "hello"
	}, Settled: func() { settled++ }}
	if !s.Has(PostToolUse) {
		t.Fatal("a pending hook's event has hooks")
	}
	if got := s.RefusedFor(PreToolUse, "Bash"); len(got) != 1 || got[0].Command != "guard" {
		t.Fatalf("an unapproved guard is refused (fail closed): %+v", got)
	}
	s.Settle(context.Background())
	if asked != 3 || settled != 1 {
		t.Fatalf("each pending hook is decided once, asked %d times, settled %d times", asked, settled)
	}
	if s.Has(PostToolUse) {
		t.Fatal("an unapproved PostToolUse hook does not run")
	}
	if len(s.Config.For(SessionStart, "startup")) != 1 {
		t.Fatal("an approved hook runs")
	}
}

// TestSetDoesNotWaitForAnAnswerBesideIt: while a pending hook's question
// waits for its answer, Has answers and a Notification fires (as the bell
// beside the question does) without waiting for it.
func TestSetDoesNotWaitForAnAnswerBesideIt(t *testing.T) {
	answer := make(chan bool)
	asking := make(chan struct{})
	s := &Set{Runner: &Runner{ProjectDir: t.TempDir()},
		Pending: []Hook{{Event: PreToolUse, Matcher: "Bash", Command: "guard", Source: SourceProject}},
		Approve: func(context.Context, Hook) bool { close(asking); return <-answer }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Settle(context.Background())
	}()
	<-asking
	if !s.Has(PreToolUse) {
		t.Fatal("the pending guard's event has hooks")
	}
	s.Fire(context.Background(), Notification, &NotificationInput{Message: "ralph asks"})
	answer <- false
	<-done
	if got := s.RefusedFor(PreToolUse, "Bash"); len(got) != 1 {
		t.Fatalf("refused: %+v", got)
	}
}

// TestSetStopsAHookThatChanged: a project's hook whose files changed
// since it was approved stops running in the middle of the session, and
// a changed guard refuses the calls it matches; the person's own hooks
// are not checked.
func TestSetStopsAHookThatChanged(t *testing.T) {
	guard := Hook{Event: PreToolUse, Matcher: "Bash", Command: "guard", Source: SourceProject}
	mine := Hook{Event: PreToolUse, Matcher: "Bash", Command: "mine", Source: SourceUser}
	changed := false
	s := &Set{Config: Config{Hooks: []Hook{guard, mine}}, Unchanged: func(h Hook) bool {
		if h.Source == SourceUser {
			t.Error("the person's own hook was checked")
		}
		return !changed
	}}
	if got := s.RefusedFor(PreToolUse, "Bash"); len(got) != 0 {
		t.Fatalf("unchanged: refused %+v", got)
	}
	changed = true
	if got := s.RefusedFor(PreToolUse, "Bash"); len(got) != 1 || got[0].Command != "guard" {
		t.Fatalf("changed: refused %+v", got)
	}
	if hooks := s.Config.For(PreToolUse, "Bash"); len(hooks) != 1 || hooks[0].Command != "mine" {
		t.Fatalf("changed: runs %+v", hooks)
	}
}

// TestSetOverBase: an agent's Set runs the session's hooks (its Base)
// and then its own; the Base's refused guards refuse its calls too; the
// session's Set knows nothing of the agent's.
func TestSetOverBase(t *testing.T) {
	session := &Set{Config: Config{Hooks: []Hook{{Event: PreToolUse, Matcher: "Bash", Command: "session", Source: SourceUser}}},
		Refused: []Hook{{Event: PreToolUse, Matcher: "Write", Command: "unapproved", Source: SourceProject}}}
	agent := &Set{Base: session, Config: Config{Hooks: []Hook{{Event: PreToolUse, Matcher: "Bash", Command: "agent", Source: SourceProject}}},
		Pending: []Hook{{Event: SubagentStop, Command: "stop", Source: SourceProject}},
		Approve: func(context.Context, Hook) bool { return true }}
	cfg := agent.config(context.Background(), PreToolUse)
	if len(cfg.Hooks) != 3 || cfg.Hooks[0].Command != "session" || cfg.Hooks[1].Command != "agent" || cfg.Hooks[2].Command != "stop" {
		t.Fatalf("the agent runs %+v, want the session's hook, then its own and its approved one", cfg.Hooks)
	}
	if !agent.Has(SubagentStop) || session.Has(SubagentStop) {
		t.Fatal("the agent's SubagentStop hook is the agent's alone")
	}
	if got := agent.RefusedFor(PreToolUse, "Write"); len(got) != 1 || got[0].Command != "unapproved" {
		t.Fatalf("the session's refused guard is the agent's too: %+v", got)
	}
	if len(session.config(context.Background(), PreToolUse).Hooks) != 1 {
		t.Fatal("the session runs the agent's hook")
	}
}
