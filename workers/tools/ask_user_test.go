package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

type fakeUserAsker struct {
	got    UserQuestion
	answer string
	err    error
}

func (f *fakeUserAsker) AskUser(_ context.Context, q UserQuestion) (string, error) {
	f.got = q
	return f.answer, f.err
}

func TestAskUserTool(t *testing.T) {
	ctx := WithCaller(context.Background(), Caller{Agent: "a2"})
	run := func(a *fakeUserAsker, args string) workers.Result {
		return newAskUserTool(a).Run(ctx, json.RawMessage(args))
	}
	a := &fakeUserAsker{answer: "blue"}
	res := run(a, `{"question":"which \u001b[2Jcolour?","choices":["red","  blue  "]}`)
	if res.IsError || res.Output != "the person answered: blue" {
		t.Fatalf("result %+v", res)
	}
	if a.got.Text != "which colour?" || a.got.Agent != "a2" || strings.Join(a.got.Choices, ",") != "red,blue" {
		t.Fatalf("asked %+v", a.got)
	}
	if got := a.got.Shown(); got != "agent a2 asks: which colour?\n  1. red\n  2. blue" {
		t.Fatalf("shown %q", got)
	}
	if ChoiceAnswer(a.got, " 2 ") != "blue" || ChoiceAnswer(a.got, "3") != "3" || ChoiceAnswer(a.got, "green") != "green" {
		t.Fatal("choice numbers are not read as the choices")
	}
	res = run(&fakeUserAsker{err: errors.New("nobody can answer: there is no terminal to ask at")}, `{"question":"which?"}`)
	if res.IsError || !strings.Contains(res.Output, "no answer (nobody can answer: there is no terminal to ask at): decide yourself") {
		t.Fatalf("nobody: %+v", res)
	}
	for _, bad := range []string{`{"question":"  "}`, `{"question":"` + strings.Repeat("x", 3000) + `"}`, `{"question":"q","choices":["` + strings.Repeat("y", 300) + `"]}`, `[]`} {
		if res := run(&fakeUserAsker{}, bad); !res.IsError {
			t.Errorf("%.40s: accepted", bad)
		}
	}
}
