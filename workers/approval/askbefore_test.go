package approval

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

var testAskBefore = []string{"git push*", "rm -r*", "go.mod", "package.json", "*.sql", "migrations/"}

// TestAskBeforeCommands: a command pattern catches the simple command
// wherever the shell parser finds it, and through the commands that run
// other commands; nothing else.
func TestAskBeforeCommands(t *testing.T) {
	ab := newAskBefore(testAskBefore)
	held := map[string]string{
		"git push origin main":                 "git push*",
		"go test ./... && git push":            "git push*",
		"git -C sub push --force":              "git push*",
		"/usr/bin/git push":                    "git push*",
		"a && rm -rf x":                        "rm -r*",
		"rm -fr build":                         "rm -r*",
		"(cd sub; rm -r x)":                    "rm -r*",
		"if true; then rm -rf x; fi":           "rm -r*",
		"sudo rm -rf x":                        "rm -r*",
		"env GIT_TRACE=1 git push":             "git push*",
		"timeout 10 git push":                  "git push*",
		"xargs rm -r < list":                   "rm -r*",
		`bash -c "git push origin main"`:       "git push*",
		`sh -c 'echo hi; rm -rf /tmp/x'`:       "rm -r*",
		`eval "git push"`:                      "git push*",
		"find . -name x -exec rm -rf {} +":     "rm -r*",
		"git $SUB origin":                      "git push*", // what $SUB is cannot be known
		"echo module x > go.mod":               "go.mod",
		"cat a >> sub/go.mod":                  "go.mod",
		"cp go.sum go.mod":                     "go.mod",
		"mv package.json old.json":             "package.json",
		"echo 'drop table x;' > db/schema.sql": "*.sql",
		"touch migrations/001_init.up.sql":     "*.sql",
		"tee migrations/x.txt < in":            "migrations/",
		"echo x > " + testRoot + "/GO.MOD":     "go.mod",
		"git push\x1b[2K":                      "git push*",
	}
	for line, want := range held {
		m, ok := ab.command(line, place{roots: []string{testRoot}})
		if !ok || m.pattern != want {
			t.Errorf("%q: matched %v %q, want %q", line, ok, m.pattern, want)
		}
	}
	free := []string{
		"git status", "git pull", "git log --grep push", "echo git push", "rm x", "rm -f x",
		"cat go.mod", "go mod tidy -v", "grep -r pushd .", "ls migrations", "psql -f schema.sql",
		"echo hi > notes.txt", "$EDITOR README.md", "make push",
	}
	for _, line := range free {
		if m, ok := ab.command(line, place{roots: []string{testRoot}}); ok {
			t.Errorf("%q: matched %q (%s), want no match", line, m.pattern, m.what)
		}
	}
	if _, ok := newAskBefore(nil).command("git push", place{}); ok {
		t.Error("no patterns matched a command")
	}
}

func TestAskBeforePaths(t *testing.T) {
	ab := newAskBefore(testAskBefore)
	for _, p := range []string{"go.mod", "sub/go.mod", "Go.Mod", "db/x.sql", "migrations/a/b.txt", "package.json"} {
		if _, ok := ab.path("write_file", p); !ok {
			t.Errorf("%s: not held back", p)
		}
	}
	for _, p := range []string{"go.sum", "main.go", "gomod", "x.sqlite", "migrationsx/a", "docs/package.json.md"} {
		if m, ok := ab.path("write_file", p); ok {
			t.Errorf("%s: held back by %q", p, m.pattern)
		}
	}
	// A path pattern with a slash is anchored at the project root.
	ab = newAskBefore([]string{"config/*.yml", "deploy/**"})
	if _, ok := ab.path("edit_file", "config/app.yml"); !ok {
		t.Error("config/app.yml not held back")
	}
	if _, ok := ab.path("edit_file", "sub/config/app.yml"); ok {
		t.Error("sub/config/app.yml held back by an anchored pattern")
	}
	if _, ok := ab.path("edit_file", "deploy/a/b/c"); !ok {
		t.Error("deploy/** does not reach deep files")
	}
}

// TestAskBeforeBeatsYesAndRules: --yes and a remembered rule still ask
// the person about a held-back command or file; nobody to ask refuses in
// one sentence; "always" is never offered for them.
func TestAskBeforeBeatsYesAndRules(t *testing.T) {
	ctx := context.Background()
	p, _ := newPolicy(t, Options{Yes: true, UserRules: []string{"git push"}, AskBefore: testAskBefore})
	for _, d := range []tools.Decision{
		p.ApproveCommand(ctx, "git push origin main"),
		p.ApproveWrite(ctx, "write_file", "go.mod"),
	} {
		if d.Allowed {
			t.Fatal("allowed with nobody to ask")
		}
		if !strings.Contains(d.Reason, "needs a person's approval (ask_before") || !strings.Contains(d.Reason, "nobody can be asked here") ||
			strings.Count(d.Reason, ". ") > 0 {
			t.Errorf("reason is not one clear sentence: %q", d.Reason)
		}
	}
	if d := p.ApproveCommand(ctx, "git status"); !d.Allowed {
		t.Errorf("--yes no longer allows git status: %v", d.Reason)
	}
	if d := p.ApproveWrite(ctx, "write_file", "main.go"); !d.Allowed {
		t.Errorf("a write ask_before does not name was held back: %v", d.Reason)
	}

	a := &scriptedAsker{answers: []Answer{Yes, No, Yes}}
	p.SetAsker(a)
	if d := p.ApproveCommand(ctx, "go vet ./... && git push"); !d.Allowed {
		t.Errorf("yes did not allow: %v", d.Reason)
	}
	if d := p.ApproveWrite(ctx, "edit_file", "go.mod"); d.Allowed || d.Reason != reasonDeclined {
		t.Errorf("no did not refuse: %+v", d)
	}
	if d := p.ApproveWrite(ctx, "write_file", "renamed.txt", "sub/go.mod"); !d.Allowed {
		t.Errorf("yes did not allow the write: %v", d.Reason)
	}
	if len(a.asked) != 3 {
		t.Fatalf("asked %d questions, want 3", len(a.asked))
	}
	for _, q := range a.asked {
		if q.CanAlways() || !strings.Contains(q.Text(), "ask_before") {
			t.Errorf("question offers always or hides why: %q", q.Text())
		}
	}
	if q := a.asked[1]; q.Tool != "edit_file" || !strings.HasPrefix(q.Text(), "change go.mod (edit_file)? [y]es / [n]o") {
		t.Errorf("write question = %q", q.Text())
	}
	// The answer is not remembered: the next push asks again.
	a.answers = []Answer{No}
	if d := p.ApproveCommand(ctx, "git push"); d.Allowed || len(a.asked) != 4 {
		t.Errorf("a second push was not asked about again: %+v, %d questions", d, len(a.asked))
	}
}
