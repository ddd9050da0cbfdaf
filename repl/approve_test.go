package repl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/workers"
)

// fakeAsker answers questions from a script and records them.
type fakeAsker struct {
	answers   []string
	questions []string
	notes     []string
}

func (f *fakeAsker) Ask(_ context.Context, question, _, _ string) (string, bool) {
	f.questions = append(f.questions, question)
	if len(f.answers) == 0 {
		return "", false // as when a hard stop cancels the question
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, true
}

func (f *fakeAsker) note(text string, _ bool) { f.notes = append(f.notes, text) }

func TestApproverAnswers(t *testing.T) {
	fs := afero.NewMemMapFs()
	a := NewApprover(false)
	a.Configure(fs, "/p", []string{"ls"})
	ask := &fakeAsker{answers: []string{"y", "what?", "n", "A"}}
	a.attach(ask)
	ctx := context.Background()
	if d := a.ApproveCommand(ctx, "ls -la"); !d.Allowed || len(ask.questions) != 0 {
		t.Fatalf("an allowed command was asked about: %+v %q", d, ask.questions)
	}
	if d := a.ApproveCommand(ctx, "touch x"); !d.Allowed {
		t.Fatalf("y: %+v", d)
	}
	if d := a.ApproveCommand(ctx, "rm x"); d.Allowed || !strings.Contains(d.Reason, "declined") || len(ask.questions) != 3 {
		t.Fatalf("n after a bad answer: %+v, questions %q", d, ask.questions)
	}
	if d := a.ApproveCommand(ctx, "go test ./... && go vet ./..."); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	if !strings.Contains(ask.questions[3], "always allows `go test`, `go vet`") {
		t.Fatalf("the question does not say what always allows: %q", ask.questions[3])
	}
	got, _ := afero.ReadFile(fs, filepath.Join("/p", ".ralph", "config.toml"))
	if string(got) != "allowed_commands = [\"go test\", \"go vet\"]\n" {
		t.Fatalf("config.toml = %q", got)
	}
	n := len(ask.questions)
	if d := a.ApproveCommand(ctx, "go test -run X"); !d.Allowed || len(ask.questions) != n {
		t.Fatal("a remembered prefix was asked about again")
	}
	if d := a.ApproveCommand(ctx, "go build"); d.Allowed {
		t.Fatal("go build was allowed by go test")
	}
}

func TestApproverWithoutAShellOrWhenStopped(t *testing.T) {
	a := NewApprover(false)
	a.Configure(afero.NewMemMapFs(), "/p", nil)
	if d := a.ApproveCommand(context.Background(), "ls"); d.Allowed || !strings.Contains(d.Reason, workers.ApprovalHint) {
		t.Fatalf("no shell: %+v", d)
	}
	a.attach(&fakeAsker{})
	if d := a.ApproveCommand(context.Background(), "ls"); d.Allowed || !strings.Contains(d.Reason, "cancelled") {
		t.Fatalf("stopped while asking: %+v", d)
	}
	if d := NewApprover(true).ApproveCommand(context.Background(), "rm -rf build"); !d.Allowed {
		t.Fatal("--yes did not approve")
	}
	ask := &fakeAsker{answers: []string{"a", "y"}}
	a.attach(ask)
	if d := a.ApproveCommand(context.Background(), "echo $(id)"); !d.Allowed || len(ask.questions) != 2 || strings.Contains(ask.questions[0], "[a]lways") {
		t.Fatalf("a substituting command offered always: %+v %q", d, ask.questions)
	}
}

func TestHistory(t *testing.T) {
	h := loadHistory(filepath.Join(t.TempDir(), "missing"))
	if flat := h.add("line 1\nline\t2"); flat != "line 1␤line⇥2" || unpaste(flat) != "line 1\nline\t2" {
		t.Fatalf("add = %q", flat)
	}
	h.add("b")
	h.add("c")
	if got := h.last(2); len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Fatalf("last(2) = %q", got)
	}
	if got := h.last(10); len(got) != 3 {
		t.Fatalf("last(10) = %q", got)
	}
}
