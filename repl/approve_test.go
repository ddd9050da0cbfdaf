package repl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// fakePrompter answers questions from a script and records them.
type fakePrompter struct {
	answers   []string
	questions []string
	notes     []string
}

func (f *fakePrompter) Ask(_ context.Context, question, _, _ string) (string, bool) {
	f.questions = append(f.questions, question)
	if len(f.answers) == 0 {
		return "", false // as when a hard stop cancels the question
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, true
}

func (f *fakePrompter) AskKey(ctx context.Context, question, prompt, what, _ string) (string, bool) {
	return f.Ask(ctx, question, prompt, what)
}

func (f *fakePrompter) note(text string, _ bool) { f.notes = append(f.notes, text) }

// The shell's asker shows the policy's question, asks again after an
// answer it does not understand, and turns the answer into the policy's.
func TestApprovalAsker(t *testing.T) {
	fs := afero.NewMemMapFs()
	p := approval.New(approval.Options{Fs: fs, Root: "/p", UserConfigDir: "/home", UserRules: []string{"ls"}})
	ask := &fakePrompter{answers: []string{"y", "what?", "n", "A"}}
	p.SetAsker(approvalAsker{sh: ask})
	ctx := context.Background()
	if d := p.ApproveCommand(ctx, "ls -la"); !d.Allowed || len(ask.questions) != 0 {
		t.Fatalf("an allowed command was asked about: %+v %q", d, ask.questions)
	}
	if d := p.ApproveCommand(ctx, "touch x"); !d.Allowed {
		t.Fatalf("y: %+v", d)
	}
	if d := p.ApproveCommand(ctx, "rm x"); d.Allowed || !strings.Contains(d.Reason, "declined") || len(ask.questions) != 3 {
		t.Fatalf("n after a bad answer: %+v, questions %q", d, ask.questions)
	}
	if !strings.Contains(ask.questions[2], "please answer y (yes), n (no), t (no, and tell it why), a (always)") {
		t.Fatalf("a bad answer was not asked again: %q", ask.questions[2])
	}
	if d := p.ApproveCommand(ctx, "go test ./... && go vet ./..."); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	if !strings.Contains(ask.questions[3], "[a]lways remembers `go test`, `go vet`") {
		t.Fatalf("the question does not say what always remembers: %q", ask.questions[3])
	}
	got, _ := afero.ReadFile(fs, filepath.Join("/home", "ralph", "config.toml"))
	// Each allowed command is shown running once allowed, then what
	// always saved.
	if string(got) != "allowed_commands = [\"go test\", \"go vet\"]\n" || len(ask.notes) != 3 || ask.notes[0] != "• running `touch x`" {
		t.Fatalf("your config.toml = %q, notes %q", got, ask.notes)
	}
	if d := p.ApproveCommand(ctx, "go build"); d.Allowed {
		t.Fatal("go build was allowed by go test")
	}
	// t is "no, and tell it why": the next line is what the model is told.
	ask.answers = []string{"t", "use make instead"}
	if d := p.ApproveCommand(ctx, "cc main.c"); d.Allowed || !strings.Contains(d.Reason, "use make instead") {
		t.Fatalf("no with a reason: %+v", d)
	}
}

func TestApprovalAskerStopped(t *testing.T) {
	p := approval.New(approval.Options{Root: "/p"})
	p.SetAsker(approvalAsker{sh: &fakePrompter{}})
	if d := p.ApproveCommand(context.Background(), "ls"); d.Allowed || !strings.Contains(d.Reason, "not answered") {
		t.Fatalf("stopped while asking: %+v", d)
	}
	ask := &fakePrompter{answers: []string{"a", "y"}}
	p.SetAsker(approvalAsker{sh: ask})
	if d := p.ApproveCommand(context.Background(), "echo $(id)"); !d.Allowed || len(ask.questions) != 2 || strings.Contains(ask.questions[0], "/ [a]lways") {
		t.Fatalf("a substituting command offered always: %+v %q", d, ask.questions)
	}
}

func TestHistory(t *testing.T) {
	h := openHistory(afero.NewOsFs(), filepath.Join(t.TempDir(), "missing"), nil)
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

// A command run in a directory of the project is asked about with the
// directory beside it, and its running line names it too, while the
// person's rules still allow it by the command alone.
func TestApprovalAskerNamesTheDirectory(t *testing.T) {
	p := approval.New(approval.Options{Root: "/p", UserRules: []string{"ls"}})
	ask := &fakePrompter{answers: []string{"y"}}
	p.SetAsker(approvalAsker{sh: ask})
	in := tools.WithWorkdir(context.Background(), "src/app")
	if d := p.ApproveCommand(in, "npm test"); !d.Allowed || len(ask.questions) != 1 {
		t.Fatalf("%+v, questions %q", d, ask.questions)
	}
	if !strings.HasPrefix(ask.questions[0], "run `npm test` in src/app? ") {
		t.Errorf("question: %q", ask.questions[0])
	}
	if len(ask.notes) != 1 || ask.notes[0] != "• running `npm test` in src/app" {
		t.Errorf("notes: %q", ask.notes)
	}
	if d := p.ApproveCommand(in, "ls -la"); !d.Allowed || len(ask.questions) != 1 {
		t.Errorf("ls in src/app was asked about: %+v", d)
	}
}
