package approval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

// in is ctx for a command run in dir, as run_command passes it.
func in(dir string) context.Context { return tools.WithWorkdir(context.Background(), dir) }

// TestQuestionNamesTheDirectory: a command run elsewhere than the root
// is asked about with its directory beside it, exactly as it will run,
// in the question's text, its one-line call and the record's words.
func TestQuestionNamesTheDirectory(t *testing.T) {
	asker := &scriptedAsker{answers: []Answer{Yes, Yes}}
	p, _ := newPolicy(t, Options{})
	p.SetAsker(asker)
	if d := p.ApproveCommand(in("src/app"), "npm test"); !d.Allowed {
		t.Fatalf("refused: %s", d.Reason)
	}
	q := asker.asked[0]
	if q.Command != "npm test" || q.Dir != "src/app" {
		t.Fatalf("asked %+v", q)
	}
	if first, _, _ := strings.Cut(q.Text(), "\n"); first != "run `npm test` in src/app? "+q.Choices() {
		t.Errorf("question: %q", first)
	}
	if q.What() != "run `npm test` in src/app" {
		t.Errorf("What: %q", q.What())
	}
	if name, args := q.Call(); name != tools.ToolRunCommand || string(args) != `{"command":"npm test","workdir":"src/app"}` {
		t.Errorf("Call: %s %s", name, args)
	}
	// A command of several lines, and the root, which is not named.
	if d := p.ApproveCommand(in("web"), "npm ci\nnpm test"); !d.Allowed {
		t.Fatalf("refused: %s", d.Reason)
	}
	if first, _, _ := strings.Cut(asker.asked[1].Text(), "\n"); !strings.HasPrefix(first, "run this command (2 lines) in web? ") {
		t.Errorf("question: %q", first)
	}
	if q := p.Question("npm test"); !strings.HasPrefix(q.Text(), "run `npm test`? ") || q.Dir != "" {
		t.Errorf("the root is named: %q", q.Text())
	}
	if _, args := p.Question("npm test").Call(); string(args) != `{"command":"npm test"}` {
		t.Errorf("Call at the root: %s", args)
	}
	// A directory the model wrote with controls in it is made visible.
	if q := (Question{Command: "ls", Dir: "a\x1b[2Jb"}); strings.Contains(q.Text(), "\x1b") {
		t.Errorf("control character shown: %q", q.Text())
	}
}

// TestAlwaysRulesMatchTheCommandWherever: "always" rules and the rules a
// person wrote (Bash(npm test:*)) are the command's own, so they allow it
// in any directory, and an "always" answered about a command in a
// directory remembers the command's rule.
func TestAlwaysRulesMatchTheCommandWherever(t *testing.T) {
	rules, err := ParseToolRules([]string{"Bash(npm test:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	asker := &scriptedAsker{answers: []Answer{Always}}
	p, _ := newPolicy(t, Options{Tools: rules, UserRules: []string{"ls"}})
	p.SetAsker(asker)
	for _, c := range []struct{ dir, command string }{
		{"src/app", "npm test"},
		{"src/app", "npm test -- --watch=false"},
		{"src", "ls"},
		{"", "npm test"},
	} {
		if d := p.ApproveCommand(in(c.dir), c.command); !d.Allowed || asker.questions() != 0 {
			t.Errorf("%q in %q: allowed %v, %d questions (%s)", c.command, c.dir, d.Allowed, asker.questions(), d.Reason)
		}
		if p.WillAsk(in(c.dir), c.command) {
			t.Errorf("WillAsk(%q in %q)", c.command, c.dir)
		}
	}
	// "always" about make in a directory remembers make, for the root too.
	if d := p.ApproveCommand(in("src"), "make build"); !d.Allowed || asker.questions() != 1 {
		t.Fatalf("make: %v %d", d.Allowed, asker.questions())
	}
	if got := asker.asked[0].Remember; len(got) != 1 || got[0] != "make build" {
		t.Errorf("remembered %q", got)
	}
	if d := p.ApproveCommand(context.Background(), "make build"); !d.Allowed || asker.questions() != 1 {
		t.Errorf("make build at the root after always: %v, %d questions", d.Allowed, asker.questions())
	}
}

// TestPathsAreReadFromTheDirectory: the paths a command names are where
// the shell will find them, from the directory it starts in, for the
// rules that let it run without asking, for rm's whole project, and for
// ask_before's file patterns, which --yes does not pass.
func TestPathsAreReadFromTheDirectory(t *testing.T) {
	p, _ := newPolicy(t, Options{UserRules: []string{"cat", "rm"}})
	p.SetAsker(&scriptedAsker{})
	for _, c := range []struct {
		dir, command string
		asks         bool
	}{
		{"src", "cat ../go.mod", false}, // the project's go.mod
		{"", "cat ../go.mod", true},     // outside the project
		{"src", "cat ../../x", true},    // outside
		{"src/app", "cat ../../.git/config", true},
		{"src", "cat > ../.ralph/x", true},
		{"src", "rm -rf .", false},  // src, not the project
		{"src", "rm -rf ..", true},  // the whole project
		{"", "rm -rf src/..", true}, // the whole project
		{"a/b", "cat " + testRoot + "/x", false},
	} {
		if got := p.WillAsk(in(c.dir), c.command); got != c.asks {
			t.Errorf("%q in %q: asks %v, want %v (%v)", c.command, c.dir, got, c.asks, p.questionIn(c.dir, c.command).Why)
		}
	}

	yes, _ := newPolicy(t, Options{Yes: true, AskBefore: []string{"secrets/"}})
	asker := &scriptedAsker{answers: []Answer{No}}
	yes.SetAsker(asker)
	if d := yes.ApproveCommand(in("secrets"), "touch key"); d.Allowed || asker.questions() != 1 {
		t.Fatalf("touch key in secrets: allowed %v after %d questions", d.Allowed, asker.questions())
	}
	if q := asker.asked[0]; q.Dir != "secrets" || !strings.Contains(q.Text(), "run `touch key` in secrets?") || !strings.Contains(q.Text(), `ask_before "secrets/"`) {
		t.Errorf("question: %q", q.Text())
	}
	if d := yes.ApproveCommand(context.Background(), "touch key"); !d.Allowed || asker.questions() != 1 {
		t.Errorf("touch key at the root: %v, %d questions", d.Allowed, asker.questions())
	}
}

// TestHookAskNamesTheDirectory: a PreToolUse hook's "ask" about a
// run_command shows the directory the model gave, cleaned.
func TestHookAskNamesTheDirectory(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"command": "make", "workdir": "./web/"})
	q := askedQuestion(tools.ToolRunCommand, args, "why")
	if q.Command != "make" || q.Dir != "web" || !strings.HasPrefix(q.Text(), "run `make` in web? ") {
		t.Errorf("question %+v: %q", q, q.Text())
	}
}
