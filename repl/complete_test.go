package repl

import (
	"path/filepath"
	"reflect"
	"testing"

	prompt "github.com/c-bata/go-prompt"
	"github.com/chzyer/readline"
	"github.com/spf13/afero"
)

func texts(ss []prompt.Suggest) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Text)
	}
	return out
}

func TestRankOrdersPrefixBaseNameSubstringFuzzy(t *testing.T) {
	cands := []prompt.Suggest{
		{Text: "memory/state.go"}, {Text: "cmd/fakemodel/main.go"}, {Text: "Makefile"},
		{Text: "main.go"}, {Text: "README.md"}, {Text: "doc/summary.md"}, {Text: "x/m/a/z.txt"},
	}
	got := texts(rank(cands, "ma"))
	want := []string{"main.go", "Makefile", "cmd/fakemodel/main.go", "doc/summary.md", "x/m/a/z.txt", "memory/state.go"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rank = %q\nwant   %q", got, want)
	}
	if got := texts(rank(cands, "")); got[0] != "main.go" || len(got) != len(cands) {
		t.Fatalf("rank with no query = %q", got)
	}
	if got := rank(cands, "qqq"); len(got) != 0 {
		t.Fatalf("rank(qqq) = %q", texts(got))
	}
}

func completerFS(t *testing.T) *completer {
	t.Helper()
	fs := afero.NewMemMapFs()
	for _, p := range []string{"README.md", "src/main.go", ".git/HEAD", "node_modules/x/index.js", ".ralph/sessions/20260101T000000Z-aaaaaa/session.json", ".ralph/sessions/20260102T000000Z-bbbbbb/session.json"} {
		if err := afero.WriteFile(fs, filepath.Join("/p", p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return newCompleter(fs, "/p", nil)
}

func TestCompleteCommandsFilesAndSessions(t *testing.T) {
	c := completerFS(t)
	do := func(line string) ([]string, int) {
		cands, n := c.Do([]rune(line), len([]rune(line)))
		var out []string
		for _, r := range cands {
			out = append(out, string(r))
		}
		return out, n
	}
	if got, n := do("/sta"); !reflect.DeepEqual(got, []string{"tus"}) || n != 3 {
		t.Fatalf(`Do("/sta") = %q, %d`, got, n)
	}
	if got, _ := do("/s"); !reflect.DeepEqual(got, []string{"top", "tatus", "kills", "ession"}) {
		t.Fatalf(`Do("/s") = %q`, got)
	}
	if got, _ := do("look at @sr"); !reflect.DeepEqual(got, []string{"c/main.go"}) {
		t.Fatalf(`Do("@sr") = %q`, got)
	}
	if got, _ := do("@"); !reflect.DeepEqual(got, []string{"README.md", "src/main.go"}) {
		t.Fatalf(`Do("@") = %q (.git, .ralph and node_modules must be skipped)`, got)
	}
	if got, _ := do("/session 2026"); !reflect.DeepEqual(got, []string{"0102T000000Z-bbbbbb", "0101T000000Z-aaaaaa"}) {
		t.Fatalf(`Do("/session 2026") = %q`, got)
	}
	if got, _ := do("not /sta"); got != nil {
		t.Fatalf("a slash in mid-line completed: %q", got)
	}
}

func TestTabReplacesWithTheBestFuzzyMatch(t *testing.T) {
	c := completerFS(t)
	listen := completionListener(c)
	line := []rune("see @rdme now")
	pos := len("see @rdme")
	if cands, _ := c.Do(line, pos); cands != nil {
		t.Fatalf("fuzzy matches were offered for insertion: %q", cands)
	}
	got, at, ok := listen(line, pos, readline.CharTab)
	if !ok || string(got) != "see @README.md now" || at != len("see @README.md") {
		t.Fatalf("listener = %q, %d, %v", string(got), at, ok)
	}
	if _, _, ok := listen(line, pos, readline.CharTab); ok {
		t.Fatal("the replacement was applied twice")
	}
}

// Tab offers a custom command with its argument hint and description.
func TestCompleteCustomCommandWithHint(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", "")
	c := completerFS(t)
	_ = afero.WriteFile(c.fs, "/p/.claude/commands/fix-issue.md", []byte("---\ndescription: Fix a numbered issue\nargument-hint: [number] [priority]\n---\nFix #$1."), 0o644)
	cands, _, _ := c.candidates("", "/fix")
	for _, s := range cands {
		if s.Text == "fix-issue" {
			if s.Description != "[number] [priority] — Fix a numbered issue" {
				t.Fatalf("description %q", s.Description)
			}
			return
		}
	}
	t.Fatalf("/fix-issue not offered: %q", texts(cands))
}
