package eventwords

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// switchesThatDoNotPrint are the files outside this package that switch
// on an event's kind for something other than words, and why. A file
// that words events must use EventLine, Activity or Transcript instead.
// The recorder's transcript was the last one (until issue 58): it writes
// Transcript's markdown now.
var switchesThatDoNotPrint = map[string]string{}

// TestOnlyEventwordsWordsEvents fails when a non-test file outside this
// package switches on event kinds and builds words in its cases: a string
// literal with a word or a glyph in it, or a fmt call with one. That is a
// second vocabulary, the kind of copy that drifted before issue 50.
// Escape sequences and the names of tools and fields are not words.
func TestOnlyEventwordsWordsEvents(t *testing.T) {
	root := filepath.Join("..", "..")
	kinds := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "coordinator", "event", "event.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok {
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Type" {
				for _, name := range v.Names {
					kinds[name.Name] = true
				}
			}
		}
		return true
	})
	if len(kinds) < 20 {
		t.Fatalf("found %d event kinds in coordinator/event/event.go", len(kinds))
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "coordinator/eventwords" || rel == "e2e" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if _, ok := switchesThatDoNotPrint[rel]; ok {
			return nil
		}
		files++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, pos := range wordingSwitches(file, kinds) {
			t.Errorf("%s:%d switches on event kinds and words them: use eventwords.EventLine, Activity or Transcript (or list the switch in switchesThatDoNotPrint, with why)",
				rel, fset.Position(pos).Line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s; has the tree moved?", files, root)
	}
}

// wordingSwitches are the switches of f that have an event kind in a case
// and words in a case's body. A kind is named through the event package
// (event.Retry): its names are short words (Error, Retry, Question) that
// other packages' names may share, so a bare or other package's name is
// no kind.
func wordingSwitches(f *ast.File, kinds map[string]bool) []token.Pos {
	var out []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		onKinds, words := false, false
		for _, s := range sw.Body.List {
			cc := s.(*ast.CaseClause)
			for _, e := range cc.List {
				ast.Inspect(e, func(n ast.Node) bool {
					if x, ok := n.(*ast.SelectorExpr); ok {
						pkg, ok := x.X.(*ast.Ident)
						onKinds = onKinds || ok && pkg.Name == "event" && kinds[x.Sel.Name]
					}
					return true
				})
			}
			for _, st := range cc.Body {
				ast.Inspect(st, func(n ast.Node) bool {
					if _, nested := n.(*ast.SwitchStmt); nested {
						return false
					}
					if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && isWords(lit.Value) {
						words = true
					}
					return true
				})
			}
		}
		if onKinds && words {
			out = append(out, sw.Pos())
		}
		return true
	})
	return out
}

var (
	escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
	aWord   = regexp.MustCompile(`[A-Za-z]{2,}\s|\s[A-Za-z]{2,}|[^\x00-\x7f]`)
)

// isWords says whether a string literal says something to a person: a
// word beside a space, or a glyph. A bare identifier ("in_progress", a
// tool's name) and an escape sequence do not.
func isWords(lit string) bool {
	s, err := strconv.Unquote(lit)
	if err != nil {
		return false
	}
	return aWord.MatchString(escapes.ReplaceAllString(s, ""))
}

// TestGuardCatchesASecondVocabulary: the chat's switch of before issue
// 50, which worded events itself, is caught; a switch that only acts is
// not, nor one on another package's name that a kind's name shares.
func TestGuardCatchesASecondVocabulary(t *testing.T) {
	kinds := map[string]bool{"AgentSpawned": true, "Retry": true}
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p
func f(ev E) { switch ev.Type {
case event.AgentSpawned:
	s.line("↗ " + ev.AgentID + " started: " + ev.Text)
} }`, 1},
		{`package p
func f(ev E) { switch {
case ev.Type == event.Retry:
	s = fmt.Sprintf("attempt %d failed, retrying in %s", a, w)
} }`, 1},
		{`package p
func f(ev E) { switch ev.Type {
case event.Retry:
	fmt.Fprint(w, "\r\x1b[K")
	status = "in_progress"
} }`, 0},
		{`package p
func f(s S) { switch s {
case backoff.Retry:
	msg = "tried again in a while"
} }`, 0},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(wordingSwitches(f, kinds)); got != c.want {
			t.Errorf("%d wording switches, want %d in\n%s", got, c.want, c.src)
		}
	}
}
