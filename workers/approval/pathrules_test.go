package approval

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

// TestPathRulesReadAsClaudeCodeReadsThem (issue 88, gap C): the examples
// of Claude Code's permissions documentation (four anchors, gitignore's
// wildcards) and gitignore's own, with the project at /p and the home at
// /h.
func TestPathRulesReadAsClaudeCodeReadsThem(t *testing.T) {
	base := PathBase{Roots: []string{"/p"}, Home: "/h"}
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		// **/ is zero or more directories: the top of the project too.
		{"**/secret.txt", []string{"/p/secret.txt", "/p/d/secret.txt", "/p/d/e/secret.txt"}, []string{"/p/secret.txt.bak", "/p/notsecret.txt", "/q/secret.txt"}},
		{"./**/secret.txt", []string{"/p/secret.txt", "/p/d/secret.txt"}, nil},
		{"**/*.txt", []string{"/p/secret.txt", "/p/d/e/x.txt"}, []string{"/p/x.txt.go"}},
		{"**/.env", []string{"/p/.env", "/p/api/.env"}, []string{"/p/.envrc"}},
		// A name with no slash matches at any depth; ./ names the
		// current directory, the project root.
		{"*.txt", []string{"/p/a.txt", "/p/d/a.txt"}, []string{"/p/a.go"}},
		{"secret.*", []string{"/p/secret.txt", "/p/d/secret.md"}, nil},
		{".env", []string{"/p/.env", "/p/sub/.env"}, nil},
		{"./secret.txt", []string{"/p/secret.txt"}, nil},
		// A slash anchors it: Edit(docs/**) is the project's docs.
		{"docs/**", []string{"/p/docs/a.md", "/p/docs/x/y.md"}, []string{"/p/a/docs/x.md", "/p/docs"}},
		{"src/*.ts", []string{"/p/src/a.ts"}, []string{"/p/src/x/a.ts", "/p/lib/src/a.ts"}},
		{"a/**/b", []string{"/p/a/b", "/p/a/x/b", "/p/a/x/y/b"}, []string{"/p/b", "/p/c/a/b"}},
		// /path is the project's (Edit(/src/**/*.ts)), and also the
		// absolute path it looks like.
		{"/src/**/*.ts", []string{"/p/src/a.ts", "/p/src/x/y/a.ts", "/src/a.ts"}, []string{"/p/lib/a.ts"}},
		{"/p/secret.txt", []string{"/p/secret.txt", "/p/p/secret.txt"}, []string{"/p/d/secret.txt"}},
		// //path is absolute; ~/path the home's.
		{"//tmp/scratch.txt", []string{"/tmp/scratch.txt"}, []string{"/p/tmp/scratch.txt"}},
		{"//Users/alice/secrets/**", []string{"/Users/alice/secrets/a", "/Users/alice/secrets/b/c"}, []string{"/Users/alice/other"}},
		{"//p/**", []string{"/p/secret.txt", "/p/d/e"}, []string{"/q/x"}},
		{"///tmp//scratch.txt", []string{"/tmp/scratch.txt"}, []string{"/p/tmp/scratch.txt"}},
		{"~/.zshrc", []string{"/h/.zshrc"}, []string{"/p/.zshrc", "/h/x/.zshrc"}},
		{"~/Documents/*.pdf", []string{"/h/Documents/a.pdf"}, []string{"/h/Documents/x/a.pdf", "/p/Documents/a.pdf"}},
		// A pattern matching a directory covers what is in it; a
		// trailing slash matches directories only.
		{"build", []string{"/p/build", "/p/build/x.o", "/p/sub/build/y.o"}, nil},
		{"secrets/", []string{"/p/secrets/a", "/p/x/secrets/a"}, []string{"/p/secrets"}},
		// Classes, escapes, and letters in either case.
		{"[ab].txt", []string{"/p/a.txt", "/p/b.txt"}, []string{"/p/c.txt"}},
		{`\*.txt`, []string{"/p/*.txt"}, []string{"/p/a.txt"}},
		{"SECRET.txt", []string{"/p/secret.txt"}, nil},
		{"**", []string{"/p/a", "/p/a/b"}, []string{"/q/a"}},
	} {
		r := ParsePathRule(c.pattern, base)
		for _, p := range c.yes {
			if !r.Matches(p) {
				t.Errorf("%s does not match %s", c.pattern, p)
			}
		}
		for _, p := range c.no {
			if r.Matches(p) {
				t.Errorf("%s matches %s", c.pattern, p)
			}
		}
	}
	if r := ParsePathRule("secrets/", base); !r.MatchesDir("/p/secrets") {
		t.Error("secrets/ does not match the directory /p/secrets")
	}
	// Started in /p/sub, a relative rule is read from there too (as
	// Claude Code reads it) and from the root.
	sub := PathBase{Roots: []string{"/p"}, Home: "/h", Cwd: "/p/sub"}
	for _, p := range []string{"/p/sub/src/a.ts", "/p/src/a.ts"} {
		if !ParsePathRule("src/*.ts", sub).Matches(p) {
			t.Errorf("src/*.ts, started in /p/sub, does not match %s", p)
		}
	}
}

// TestPathRulesClimbAndTellWhereTheyLie: a rule may climb from its
// anchor (../shared/.env from /p/sub) and . and .. inside it are read as
// the system reads a path; Bases is where each match is or lies below,
// which a caller finding a rule's files on disk walks from; the zero
// PathRule matches nothing.
func TestPathRulesClimbAndTellWhereTheyLie(t *testing.T) {
	base := PathBase{Roots: []string{"/p/sub"}, Home: "/h"}
	for _, c := range []struct {
		pattern string
		yes, no []string
		bases   []string
	}{
		{"../shared/.env", []string{"/p/shared/.env"}, []string{"/p/sub/shared/.env", "/p/sub/.env"}, []string{"/p/shared/.env"}},
		{"./a/../b/x", []string{"/p/sub/b/x"}, []string{"/p/sub/a/b/x"}, []string{"/p/sub/b/x"}},
		{"..", []string{"/p/x", "/p/sub/x"}, []string{"/q/x"}, []string{"/p"}},
		{"secrets/*.key", []string{"/p/sub/secrets/a.key"}, []string{"/p/sub/x/secrets/a.key"}, []string{"/p/sub/secrets"}},
		{"*.pem", []string{"/p/sub/a.pem", "/p/sub/d/a.pem"}, nil, []string{"/p/sub"}},
		{"/etc/app/**", []string{"/etc/app/x", "/p/sub/etc/app/x"}, nil, []string{"/etc/app", "/p/sub/etc/app"}},
		{"~/.aws/", []string{"/h/.aws/credentials"}, nil, []string{"/h/.aws"}},
	} {
		r := ParsePathRule(c.pattern, base)
		for _, p := range c.yes {
			if !r.Matches(p) {
				t.Errorf("%s does not match %s", c.pattern, p)
			}
		}
		for _, p := range c.no {
			if r.Matches(p) {
				t.Errorf("%s matches %s", c.pattern, p)
			}
		}
		if got := r.Bases(); !slices.Equal(got, c.bases) {
			t.Errorf("%s lies below %q, want %q", c.pattern, got, c.bases)
		}
	}
	if (PathRule{}).Matches("/p/x") {
		t.Error("the zero PathRule matches a file")
	}
}

// TestEditDenyRulesHoldAtTheRootAndByAbsolutePath: Edit(**/secret.txt)
// and Edit(**/*.txt) refuse a secret.txt at the project's top, and
// Edit(//<root>/secret.txt) refuses it by its absolute path, whether the
// tool names it as the model did or as it resolves; a bare Write refuses
// every write, an added directory's too.
func TestEditDenyRulesHoldAtTheRootAndByAbsolutePath(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	for _, rule := range []string{"Edit(**/secret.txt)", "Edit(**/*.txt)", "Edit(//" + strings.TrimPrefix(filepath.Join(root, "secret.txt"), "/") + ")", "Edit(" + filepath.Join(root, "secret.txt") + ")", "Edit(/secret.txt)"} {
		r, err := SettingsRule(SettingsDeny, rule, "~/.claude/settings.json")
		if err != nil {
			t.Fatal(err)
		}
		p := New(Options{Root: root, Tools: r, Yes: true})
		for _, paths := range [][]string{{"secret.txt"}, {"link", "secret.txt"}, {filepath.Join(root, "secret.txt")}} {
			d := p.ApproveWrite(ctx, tools.ToolEditFile, paths...)
			if d.Allowed || !strings.Contains(d.Reason, rule) {
				t.Errorf("%s: an edit of %q was allowed (%s)", rule, paths, d.Reason)
			}
		}
		if d := p.ApproveWrite(ctx, tools.ToolEditFile, "other.go"); !d.Allowed {
			t.Errorf("%s: an edit of other.go was refused: %s", rule, d.Reason)
		}
	}
	r, err := SettingsRule(SettingsDeny, "Write", "~/.claude/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: root, Tools: r, Yes: true})
	if d := p.ApproveWrite(ctx, tools.ToolWriteFile, "/elsewhere/added/x.txt"); d.Allowed {
		t.Error("a bare Write rule let a write through")
	}
}

// TestPathRulesOfAHomeInTheRule: ~/ in a rule is the home directory the
// policy is given.
func TestPathRulesOfAHomeInTheRule(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	r, err := SettingsRule(SettingsAsk, "Edit(~/proj/**)", "~/.claude/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: root, Tools: r, Home: home, NeverAsk: true})
	if d := p.ApproveWrite(context.Background(), tools.ToolEditFile, filepath.Join(home, "proj", "a.go")); d.Allowed {
		t.Error("an ask rule under ~/ did not ask")
	}
}
