package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// searchTree is a project for search's options: two files with matches
// near their ends and in their middles, and files of several types.
func searchTree(t *testing.T) *Toolset {
	t.Helper()
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	writeTestFile(t, filepath.Join(root, "a.txt"), "match first\nb\nc\nd\ne\nf match\ng\nh\ni\nj\nk\nlast match\n")
	writeTestFile(t, filepath.Join(root, "b.txt"), "x\nMATCH upper\ny\n")
	writeTestFile(t, filepath.Join(root, "src", "app.ts"), "const match = 1\n")
	writeTestFile(t, filepath.Join(root, "src", "view.tsx"), "<Match />\nmatch()\n")
	writeTestFile(t, filepath.Join(root, "src", "main.go"), "package main // match\n")
	writeTestFile(t, filepath.Join(root, "src", "gen", "gen.go"), "package gen // match\n")
	writeTestFile(t, filepath.Join(root, "Gemfile"), "gem 'match'\n")
	return ts
}

func searchOut(t *testing.T, ts *Toolset, args map[string]any) string {
	t.Helper()
	return mustOK(t, call(t, ts, "search", args))
}

func lines(s ...string) string { return strings.Join(s, "\n") }

func TestSearchContext(t *testing.T) {
	ts := searchTree(t)
	// Context at the file's start (nothing before line 1) and end
	// (nothing after line 12), groups that touch joined, groups apart
	// divided by --, as ripgrep shows them.
	got := searchOut(t, ts, map[string]any{"pattern": "match", "path": "a.txt", "context": 2})
	want := lines(
		"a.txt:1: match first",
		"a.txt-2- b",
		"a.txt-3- c",
		"a.txt-4- d",
		"a.txt-5- e",
		"a.txt:6: f match",
		"a.txt-7- g",
		"a.txt-8- h",
		"--",
		"a.txt-10- j",
		"a.txt-11- k",
		"a.txt:12: last match",
	)
	if got != want {
		t.Errorf("context 2:\n%s\nwant:\n%s", got, want)
	}
	// context 3 joins all of them: lines 1 to 9 and 9 to 12.
	got = searchOut(t, ts, map[string]any{"pattern": "match", "path": "a.txt", "context": 3})
	if strings.Contains(got, "--") || strings.Count(got, "\n") != 11 {
		t.Errorf("context 3 should show the 12 lines as one group:\n%s", got)
	}
	// before and after apart, and each overriding context.
	got = searchOut(t, ts, map[string]any{"pattern": "f match", "path": "a.txt", "before": 1})
	if got != lines("a.txt-5- e", "a.txt:6: f match") {
		t.Errorf("before 1: %q", got)
	}
	got = searchOut(t, ts, map[string]any{"pattern": "f match", "path": "a.txt", "after": 2, "context": 5, "before": 0})
	if got != lines("a.txt:6: f match", "a.txt-7- g", "a.txt-8- h") {
		t.Errorf("after 2 over context 5: %q", got)
	}
	// Across files: a -- between the groups of two files.
	got = searchOut(t, ts, map[string]any{"pattern": "(?i)^match|^x", "glob": "*.txt", "after": 1})
	want = lines(
		"a.txt:1: match first",
		"a.txt-2- b",
		"--",
		"b.txt:1: x",
		"b.txt:2: MATCH upper",
		"b.txt-3- y",
	)
	if got != want {
		t.Errorf("two files:\n%s\nwant:\n%s", got, want)
	}
	// Without line numbers.
	got = searchOut(t, ts, map[string]any{"pattern": "f match", "path": "a.txt", "before": 1, "line_numbers": false})
	if got != lines("a.txt- e", "a.txt: f match") {
		t.Errorf("line_numbers false: %q", got)
	}
	// Context means nothing to files and count.
	if got := searchOut(t, ts, map[string]any{"pattern": "f match", "context": 3, "output": "files"}); got != "a.txt" {
		t.Errorf("files with context: %q", got)
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "before": -1}), "before must be 0 or more, not -1")
}

func TestSearchOutputModes(t *testing.T) {
	ts := searchTree(t)
	got := searchOut(t, ts, map[string]any{"pattern": "match", "output": "files"})
	want := lines("Gemfile", "a.txt", "src/app.ts", "src/gen/gen.go", "src/main.go", "src/view.tsx")
	if got != want {
		t.Errorf("files:\n%s\nwant:\n%s", got, want)
	}
	got = searchOut(t, ts, map[string]any{"pattern": "match", "output": "count", "ignore_case": true})
	want = lines("Gemfile:1", "a.txt:3", "b.txt:1", "src/app.ts:1", "src/gen/gen.go:1", "src/main.go:1", "src/view.tsx:2")
	if got != want {
		t.Errorf("count:\n%s\nwant:\n%s", got, want)
	}
	// The default stays the matching lines.
	if got := searchOut(t, ts, map[string]any{"pattern": "match", "path": "b.txt", "ignore_case": true}); got != "b.txt:2: MATCH upper" {
		t.Errorf("lines: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": "match", "path": "b.txt"}); got != `no matches for "match" in b.txt` {
		t.Errorf("case matters without ignore_case: %q", got)
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "output": "content"}), `output must be lines, files or count, not "content"`)
}

func TestSearchOnlyMatchingAndMultiline(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	writeTestFile(t, filepath.Join(root, "f.go"), "func a() {\n\treturn b(1) + b(22)\n}\nfunc c() {}\n")

	got := searchOut(t, ts, map[string]any{"pattern": `b\(\d+\)`, "only_matching": true})
	if got != lines("f.go:2: b(1)", "f.go:2: b(22)") {
		t.Errorf("only_matching: %q", got)
	}
	// A match across lines shows each line it spans.
	got = searchOut(t, ts, map[string]any{"pattern": `func a\(\) \{\n.*return`, "multiline": true})
	if got != lines("f.go:1: func a() {", "f.go:2: \treturn b(1) + b(22)") {
		t.Errorf("multiline: %q", got)
	}
	// . takes a newline, and only the matched parts of each line show.
	got = searchOut(t, ts, map[string]any{"pattern": `\{.+?return`, "multiline": true, "only_matching": true})
	if got != lines("f.go:1: {", "f.go:2: \treturn") {
		t.Errorf("multiline only_matching: %q", got)
	}
	// A multiline match with context; count counts matches, as
	// ripgrep's --count does in multiline mode.
	got = searchOut(t, ts, map[string]any{"pattern": `\}\nfunc c`, "multiline": true, "before": 1})
	if got != lines("f.go-2- \treturn b(1) + b(22)", "f.go:3: }", "f.go:4: func c() {}") {
		t.Errorf("multiline before: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": `\}\nfunc c`, "multiline": true, "output": "count"}); got != "f.go:1" {
		t.Errorf("multiline count: %q", got)
	}
	// ^ and $ still match at each line's ends.
	if got := searchOut(t, ts, map[string]any{"pattern": `^\}$`, "multiline": true}); got != "f.go:3: }" {
		t.Errorf("multiline anchors: %q", got)
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": `\{\n`}), "pass multiline: true to match across lines")
	// A class that takes a newline, and an escaped backslash before n,
	// are no newline.
	if got := searchOut(t, ts, map[string]any{"pattern": `^\}[^\n]*$`}); got != "f.go:3: }" {
		t.Errorf("[^\\n]: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": `\\n`}); got != `no matches for "\\\\n" in .` {
		t.Errorf("\\\\n: %q", got)
	}
}

func TestSearchGlobAndType(t *testing.T) {
	ts := searchTree(t)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"glob": "*.{ts,tsx}"}, lines("src/app.ts", "src/view.tsx")},
		{map[string]any{"glob": "src/*.go"}, "src/main.go"},
		{map[string]any{"glob": "**/gen/*.go"}, "src/gen/gen.go"},
		{map[string]any{"glob": "*.go !gen"}, "src/main.go"},
		{map[string]any{"glob": "!src !*.txt"}, "Gemfile"},
		{map[string]any{"type": "go"}, lines("src/gen/gen.go", "src/main.go")},
		{map[string]any{"type": "ts"}, lines("src/app.ts", "src/view.tsx")},
		{map[string]any{"type": "ruby"}, "Gemfile"},
		{map[string]any{"type": "rb"}, "Gemfile"},
		// A glob and a type together: both must hold.
		{map[string]any{"type": "go", "glob": "!src/gen/**"}, "src/main.go"},
		{map[string]any{"type": "ts", "glob": "*.tsx"}, "src/view.tsx"},
		{map[string]any{"type": "go", "glob": "*.ts"}, `no matches for "match" in .`},
		// Under a path, a glob may be written from there.
		{map[string]any{"path": "src", "glob": "gen/*"}, "src/gen/gen.go"},
		// A file named by path is searched whatever glob and type say.
		{map[string]any{"path": "a.txt", "type": "go"}, "a.txt"},
	} {
		c.args["pattern"], c.args["output"] = "match", "files"
		if got := searchOut(t, ts, c.args); got != c.want {
			t.Errorf("%v:\n%s\nwant:\n%s", c.args, got, c.want)
		}
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "type": "cobol"}), `unknown file type "cobol"; search knows c, cpp, cs,`)
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "glob": "*.{ts"}), `invalid glob "*.{ts": a { without its }`)
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "glob": "[a-"}), `invalid glob "[a-"`)
}

// TestSearchTypesAreRipgrepsTypes checks the table against what
// `rg --type-list` gives, for a few names of each kind.
func TestSearchTypesAreRipgrepsTypes(t *testing.T) {
	for name, file := range map[string]string{
		"c": "x.h", "cpp": "x.hpp", "cs": "x.cs", "css": "x.scss", "go": "x.go", "html": "x.htm", "java": "x.properties",
		"js": "x.mjs", "json": "composer.lock", "kotlin": "x.kts", "md": "x.mdx", "php": "x.phtml", "py": "x.pyi",
		"ruby": "Rakefile", "rust": "x.rs", "scala": "x.sbt", "sh": ".zshrc", "sql": "x.psql", "swift": "x.swift",
		"toml": "Cargo.lock", "ts": "x.mts", "yaml": "x.yml",
	} {
		f, err := newFileFilter("", name)
		if err != nil {
			t.Fatal(err)
		}
		if !f.admits(file, file, file) {
			t.Errorf("type %s does not take %s", name, file)
		}
		if f.admits("x.unknown", "x.unknown", "x.unknown") {
			t.Errorf("type %s takes x.unknown", name)
		}
	}
}

func TestSearchLimitAndSkip(t *testing.T) {
	ts := newTestToolset(t, Options{})
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	writeTestFile(t, filepath.Join(ts.Root(), "n.txt"), b.String())
	for i := 1; i <= 3; i++ {
		writeTestFile(t, filepath.Join(ts.Root(), fmt.Sprintf("f%d.txt", i)), "hit\n")
	}

	got := searchOut(t, ts, map[string]any{"pattern": "hit", "path": "n.txt", "limit": 3})
	if got != lines("n.txt:1: hit 1", "n.txt:2: hit 2", "n.txt:3: hit 3", "[limit of 3 lines reached; pass skip: 3 for the rest]") {
		t.Errorf("limit 3: %q", got)
	}
	got = searchOut(t, ts, map[string]any{"pattern": "hit", "path": "n.txt", "limit": 3, "skip": 3})
	if got != lines("n.txt:4: hit 4", "n.txt:5: hit 5", "n.txt:6: hit 6", "[limit of 3 lines reached; pass skip: 6 for the rest]") {
		t.Errorf("skip 3: %q", got)
	}
	// The last page says nothing more; a limit the result does not reach
	// neither.
	if got := searchOut(t, ts, map[string]any{"pattern": "hit", "path": "n.txt", "limit": 3, "skip": 8}); got != lines("n.txt:9: hit 9", "n.txt:10: hit 10") {
		t.Errorf("last page: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": "hit 1", "path": "n.txt", "limit": 5}); got != lines("n.txt:1: hit 1", "n.txt:10: hit 10") {
		t.Errorf("limit not reached: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": "hit", "path": "n.txt", "skip": 20}); got != "[nothing after skip 20: the result has 10 lines]" {
		t.Errorf("skip past the end: %q", got)
	}
	// In files and count output they count files; context lines and --
	// are lines of output, as head and tail count them.
	if got := searchOut(t, ts, map[string]any{"pattern": "hit", "output": "files", "limit": 2, "skip": 1}); got != lines("f2.txt", "f3.txt", "[limit of 2 files reached; pass skip: 3 for the rest]") {
		t.Errorf("files page: %q", got)
	}
	if got := searchOut(t, ts, map[string]any{"pattern": "hit", "output": "count", "skip": 3}); got != "n.txt:10" {
		t.Errorf("count skip: %q", got)
	}
	got = searchOut(t, ts, map[string]any{"pattern": "hit [15]$", "path": "n.txt", "after": 1, "limit": 3, "skip": 1})
	if got != lines("n.txt-2- hit 2", "--", "n.txt:5: hit 5", "[limit of 3 lines reached; pass skip: 4 for the rest]") {
		t.Errorf("context page: %q", got)
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "limit": -2}), "limit must be 0 or more, not -2")
}

// TestSearchStaysBehindTheDoor checks that search's options reach no more
// than search did: a glob that names what the walk skips, a link out of
// the project and a directory linked from outside find nothing there.
func TestSearchStaysBehindTheDoor(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	outside := workerstest.OutsideDir(t)
	writeTestFile(t, filepath.Join(outside, "secret.txt"), "match outside\n")
	writeTestFile(t, filepath.Join(root, ".git", "config"), "match in git\n")
	writeTestFile(t, filepath.Join(root, ".ralph", "config.toml"), "match in ralph\n")
	writeTestFile(t, filepath.Join(root, "in.txt"), "match inside\n")
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"glob": "**"},
		{"glob": ".git/* .ralph/* out/* link.txt"},
		{"multiline": true, "glob": "**"},
		{"output": "count"},
	} {
		args["pattern"] = "match"
		if got := searchOut(t, ts, args); strings.Contains(got, "outside") || strings.Contains(got, "git") || strings.Contains(got, "ralph") || !strings.Contains(got, "in.txt") && !strings.Contains(got, "no matches") {
			t.Errorf("%v reached past the door: %q", args, got)
		}
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "match", "path": "out", "glob": "*"}), "outside the project root")
}

func TestSearchPagesPastTheCap(t *testing.T) {
	ts := newTestToolset(t, Options{Options: workers.Options{MaxOutputBytes: 1 << 20}})
	writeTestFile(t, filepath.Join(ts.Root(), "many.txt"), strings.Repeat("match\n", 250))
	out := searchOut(t, ts, map[string]any{"pattern": "match", "skip": 200})
	if n := strings.Count(out, "\n"); n != 49 || !strings.HasPrefix(out, "many.txt:201: match") {
		t.Errorf("skip 200 of 250: %d lines, %.40q", n+1, out)
	}
}

func TestSearchArgsFromGrep(t *testing.T) {
	raw := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct{ grep, search string }{
		// No output_mode is Grep's files_with_matches.
		{`{"pattern":"x"}`, `{"output":"files","pattern":"x"}`},
		{`{"pattern":"x","output_mode":"content"}`, `{"output":"lines","pattern":"x"}`},
		{`{"pattern":"x","output_mode":"files_with_matches"}`, `{"output":"files","pattern":"x"}`},
		{`{"pattern":"x","output_mode":"count"}`, `{"output":"count","pattern":"x"}`},
		// Every option.
		{`{"pattern":"x","path":"/p/src","glob":"*.{ts,tsx}","type":"ts","output_mode":"content","-B":1,"-A":2,"-C":3,"-n":false,"-i":true,"-o":true,"head_limit":10,"offset":5,"multiline":true}`,
			`{"after":2,"before":1,"context":3,"glob":"*.{ts,tsx}","ignore_case":true,"limit":10,"line_numbers":false,"multiline":true,"only_matching":true,"output":"lines","path":"/p/src","pattern":"x","skip":5,"type":"ts"}`},
		// context is -C's name; it wins when both are given.
		{`{"pattern":"x","context":4}`, `{"context":4,"output":"files","pattern":"x"}`},
		{`{"pattern":"x","-C":1,"context":4}`, `{"context":4,"output":"files","pattern":"x"}`},
		// head_limit 0 (unlimited) and none (250) leave search's caps.
		{`{"pattern":"x","head_limit":0}`, `{"output":"files","pattern":"x"}`},
		// Numbers and flags as models write them; nulls are absent.
		{`{"pattern":"x","-A":"2","-i":"true","head_limit":5.0,"glob":null}`, `{"after":2,"ignore_case":true,"limit":5,"output":"files","pattern":"x"}`},
		// Fields Grep does not have are left out.
		{`{"pattern":"x","workdir":"y"}`, `{"output":"files","pattern":"x"}`},
	} {
		got, err := SearchArgsFromGrep(raw(c.grep))
		if err != nil {
			t.Errorf("%s: %v", c.grep, err)
			continue
		}
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal([]byte(c.search), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", c.grep, got, c.search)
		}
	}
	for in, want := range map[string]string{
		`{"pattern":"x","output_mode":"lines"}`: `Grep's "output_mode" must be "content", "files_with_matches" or "count", not "lines"`,
		`{"pattern":"x","-A":"two"}`:            `Grep's "-A" must be a whole number`,
		`{"pattern":"x","-B":-1}`:               `Grep's "-B" must be 0 or more, not -1`,
		`{"pattern":"x","-i":"yes"}`:            `Grep's "-i" must be true or false`,
		`{"pattern":7}`:                         `Grep's "pattern" must be a string`,
	} {
		if _, err := SearchArgsFromGrep(raw(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", in, err, want)
		}
	}
}

func TestGrepInputFromSearch(t *testing.T) {
	for _, c := range []struct{ search, grep string }{
		// search's default, lines, is Grep's content, said outright.
		{`{"pattern":"x"}`, `{"output_mode":"content","pattern":"x"}`},
		{`{"pattern":"x","output":"lines"}`, `{"output_mode":"content","pattern":"x"}`},
		{`{"pattern":"x","output":"files"}`, `{"output_mode":"files_with_matches","pattern":"x"}`},
		{`{"pattern":"x","output":"count"}`, `{"output_mode":"count","pattern":"x"}`},
		{`{"pattern":"x","path":"src","glob":"*.go","type":"go","ignore_case":true,"before":1,"after":0,"context":2,"only_matching":true,"line_numbers":false,"multiline":true,"limit":9,"skip":3}`,
			`{"-A":0,"-B":1,"-i":true,"-n":false,"-o":true,"context":2,"glob":"*.go","head_limit":9,"multiline":true,"offset":3,"output_mode":"content","path":"src","pattern":"x","type":"go"}`},
		// False flags and zero numbers are Grep's defaults, left out.
		{`{"pattern":"x","ignore_case":false,"limit":0,"skip":0,"context":0}`, `{"output_mode":"content","pattern":"x"}`},
	} {
		in, ok := GrepInputFromSearch(json.RawMessage(c.search))
		if !ok {
			t.Errorf("%s: not ok", c.search)
			continue
		}
		got, _ := json.Marshal(in)
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal([]byte(c.grep), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", c.search, got, c.grep)
		}
		// And back again: the same search.
		back, err := SearchArgsFromGrep(in)
		if err != nil {
			t.Errorf("%s back: %v", c.search, err)
			continue
		}
		var s1, s2 SearchParams
		_ = json.Unmarshal([]byte(c.search), &s1)
		_ = json.Unmarshal(back, &s2)
		if s1.Output == "" {
			s1.Output = searchLines
		}
		if !reflect.DeepEqual(s1, s2) {
			t.Errorf("%s came back as %s", c.search, back)
		}
	}
	if _, ok := GrepInputFromSearch(json.RawMessage(`[1]`)); ok {
		t.Error("a list is search's arguments")
	}
	// A hook's updatedInput in Grep's shape.
	got, err := SearchArgsFromGrepUpdate(nil, map[string]any{"pattern": "y", "-C": 2.0, "output_mode": "count"})
	if err != nil || string(got) != `{"context":2,"output":"count","pattern":"y"}` {
		t.Errorf("updatedInput: %s %v", got, err)
	}
}

// TestGrepCallsRunAsSearch: a Grep call, mapped at the door, does what
// Claude Code's Grep does: without output_mode it lists the files, with
// content and -C it shows the lines around each match, and head_limit and
// offset page through them.
func TestGrepCallsRunAsSearch(t *testing.T) {
	ts := searchTree(t)
	grep := func(in string) string {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		args, err := SearchArgsFromGrep(m)
		if err != nil {
			t.Fatal(err)
		}
		return mustOK(t, call(t, ts, "search", string(args)))
	}
	if got := grep(`{"pattern":"match","type":"go"}`); got != lines("src/gen/gen.go", "src/main.go") {
		t.Errorf("files by default: %q", got)
	}
	root := ts.Root()
	if got := grep(`{"pattern":"f match","path":"` + filepath.Join(root, "a.txt") + `","output_mode":"content","-C":1}`); got != lines("a.txt-5- e", "a.txt:6: f match", "a.txt-7- g") {
		t.Errorf("content with -C: %q", got)
	}
	if got := grep(`{"pattern":"MATCH","-i":true,"output_mode":"count","glob":"*.txt","head_limit":1,"offset":1}`); got != "b.txt:1" {
		t.Errorf("count, paged: %q", got)
	}
	if got := grep(`{"pattern":"ma\\w+\\(\\)","-o":true,"-n":false,"output_mode":"content","path":"src"}`); got != "src/view.tsx: match()" {
		t.Errorf("-o without -n: %q", got)
	}
}
