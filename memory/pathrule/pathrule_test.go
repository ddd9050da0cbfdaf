package pathrule

import (
	"slices"
	"testing"
)

// TestRulesReadAsClaudeCodeReadsThem (issue 88, gap C): the examples
// of Claude Code's permissions documentation (four anchors, gitignore's
// wildcards) and gitignore's own, with the project at /p and the home at
// /h.
func TestRulesReadAsClaudeCodeReadsThem(t *testing.T) {
	base := Base{Roots: []string{"/p"}, Home: "/h"}
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
		// The door's Read(…) rules (memory/kept's table), read the same
		// way. ./.env and ./.env.* are names without a slash, so at any
		// depth, as Claude Code reads them (the door once anchored them
		// at the root alone).
		{"./.env", []string{"/p/.env", "/p/.ENV", "/p/a/.env"}, []string{"/p/.env.local", "/q/.env"}},
		{".env", []string{"/p/.env", "/p/a/b/.env"}, []string{"/p/.envrc", "/h/.env"}},
		{"./.env.*", []string{"/p/.env.local", "/p/.env.production", "/p/a/.env.local"}, []string{"/p/.env"}},
		{"./secrets/**", []string{"/p/secrets/a", "/p/secrets/a/b.key"}, []string{"/p/secretsx", "/p/a/secrets/x", "/p/secrets"}},
		{"secrets/", []string{"/p/secrets/x", "/p/a/secrets/x"}, []string{"/p/secretsx", "/p/secrets"}},
		{"/secrets/", []string{"/p/secrets/x", "/secrets/x"}, []string{"/p/a/secrets/x"}},
		{"*.pem", []string{"/p/a.pem", "/p/deep/er/b.pem"}, []string{"/p/a.pem.txt", "/h/a.pem"}},
		{"**/config/*.json", []string{"/p/config/a.json", "/p/x/config/b.json"}, []string{"/p/config/a/b.json"}},
		{"/src/**/key.ts", []string{"/p/src/key.ts", "/p/src/a/b/key.ts"}, []string{"/p/key.ts"}},
		{"//etc/app/secret", []string{"/etc/app/secret", "/etc/app/secret/x"}, []string{"/p/etc/app/secret"}},
		{"~/.netrc", []string{"/h/.netrc"}, []string{"/p/.netrc"}},
		// A class Go's expressions cannot hold is read as written.
		{"[z-a].txt", []string{"/p/[z-a].txt"}, []string{"/p/b.txt"}},
	} {
		r := Parse(c.pattern, base)
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
	// Asked of a directory (MatchesDir, the door's reading of every
	// path): a trailing slash matches it, and a/** covers a, since the
	// names in a are what is in it.
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{"secrets/", []string{"/p/secrets", "/p/a/secrets"}, []string{"/p/secretsx"}},
		{"/secrets/", []string{"/p/secrets", "/secrets"}, []string{"/p/a/secrets"}},
		{"./secrets/**", []string{"/p/secrets", "/p/SECRETS"}, []string{"/p/secretsx", "/p/a/secrets", "/p"}},
		{"docs/**", []string{"/p/docs"}, []string{"/p/a/docs"}},
		{"**/cache/**", []string{"/p/cache", "/p/x/cache"}, []string{"/p/x"}},
		{"**", []string{"/p", "/p/a"}, []string{"/q", "/"}},
		{"*.pem", []string{"/p/x.pem"}, []string{"/p", "/p/x"}},
	} {
		r := Parse(c.pattern, base)
		for _, p := range c.yes {
			if !r.MatchesDir(p) {
				t.Errorf("%s does not match the directory %s", c.pattern, p)
			}
		}
		for _, p := range c.no {
			if r.MatchesDir(p) {
				t.Errorf("%s matches the directory %s", c.pattern, p)
			}
		}
	}
	// Started in /p/sub, a relative rule is read from there too (as
	// Claude Code reads it) and from the root.
	sub := Base{Roots: []string{"/p"}, Home: "/h", Cwd: "/p/sub"}
	for _, p := range []string{"/p/sub/src/a.ts", "/p/src/a.ts"} {
		if !Parse("src/*.ts", sub).Matches(p) {
			t.Errorf("src/*.ts, started in /p/sub, does not match %s", p)
		}
	}
	if r := Parse("./.env", sub); !r.Matches("/p/.env") || !r.Matches("/p/sub/.env") || r.Matches("/q/.env") {
		t.Error("./.env, started in /p/sub, is not the root's and the start's")
	}
	// A rule compiled before it is placed (the door's, parsed before the
	// session knows its root) is placed by At.
	unplaced := Parse("./secrets/*.key", Base{Home: "/h"})
	if unplaced.Matches("/p/secrets/a.key") {
		t.Error("a rule with no anchor matched a file")
	}
	if r := unplaced.At(sub); !r.Matches("/p/secrets/a.key") || !r.Matches("/p/sub/secrets/a.key") || !slices.Equal(r.Bases(), []string{"/p/secrets", "/p/sub/secrets"}) {
		t.Errorf("placed at /p from /p/sub: bases %q", r.Bases())
	}
}

// TestRulesClimbAndTellWhereTheyLie: a rule may climb from its
// anchor (../shared/.env from /p/sub; the door once refused such a
// Read(…) rule, and Claude Code reads it so) and . and .. inside it are read as
// the system reads a path; Bases is where each match is or lies below,
// which a caller finding a rule's files on disk walks from; the zero
// Rule matches nothing.
func TestRulesClimbAndTellWhereTheyLie(t *testing.T) {
	base := Base{Roots: []string{"/p/sub"}, Home: "/h"}
	for _, c := range []struct {
		pattern string
		yes, no []string
		bases   []string
	}{
		{"../shared/.env", []string{"/p/shared/.env"}, []string{"/p/sub/shared/.env", "/p/sub/.env"}, []string{"/p/shared/.env"}},
		{"./a/../b/x", []string{"/p/sub/b/x"}, []string{"/p/sub/a/b/x"}, []string{"/p/sub/b/x"}},
		{"..", []string{"/p/x", "/p/sub/x"}, []string{"/q/x"}, []string{"/p"}},
		{"../x", []string{"/p/x", "/p/x/y"}, []string{"/p/sub/x"}, []string{"/p/x"}},
		{"a/../../b", []string{"/p/b"}, []string{"/p/sub/b", "/p/sub/a/b"}, []string{"/p/b"}},
		{"secrets/*.key", []string{"/p/sub/secrets/a.key"}, []string{"/p/sub/x/secrets/a.key"}, []string{"/p/sub/secrets"}},
		{"*.pem", []string{"/p/sub/a.pem", "/p/sub/d/a.pem"}, nil, []string{"/p/sub"}},
		{"/etc/app/**", []string{"/etc/app/x", "/p/sub/etc/app/x"}, nil, []string{"/etc/app", "/p/sub/etc/app"}},
		{"~/.aws/", []string{"/h/.aws/credentials"}, nil, []string{"/h/.aws"}},
	} {
		r := Parse(c.pattern, base)
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
	if (Rule{}).Matches("/p/x") {
		t.Error("the zero Rule matches a file")
	}
}
