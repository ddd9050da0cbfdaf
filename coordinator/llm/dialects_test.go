package llm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/providers"
)

// TestServedDialectsAreKnownByTheirRows: a server on the port of a
// dialect's provider row, or one whose answers carried its fingerprint,
// is asked in that dialect; any other is not.
func TestServedDialectsAreKnownByTheirRows(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		row, ok := providers.Named(d.provider)
		if !ok {
			t.Fatalf("the dialect of %q names no provider row", d.provider)
		}
		if got := New(Config{BaseURL: row.BaseURL}).served(); got == nil || got.provider != d.provider {
			t.Errorf("a client of %s does not speak %s's dialect", row.BaseURL, d.provider)
		}
		c := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
		if c.served() != nil {
			t.Errorf("a server on another port is taken for %s", d.provider)
		}
		c.dialect.Store(dialectByFingerprint(d.fingerprint))
		if got := c.served(); got == nil || got.provider != d.provider {
			t.Errorf("a server whose answers carried %q is not taken for %s", d.fingerprint, d.provider)
		}
		if d.fix(0, false) == "" || d.fix(8192, true) == d.fix(0, true) {
			t.Errorf("%s's fix does not say where the context was set", d.provider)
		}
	}
	if dialectByFingerprint("") != nil {
		t.Error("an answer without a fingerprint is taken for a dialect's")
	}
}

// TestServedDialectLivesInItsTable fails when a string in this package
// outside dialects.go spells a fact of a served dialect (its fingerprint,
// its native API's paths): the code that asks reads them from the row.
func TestServedDialectLivesInItsTable(t *testing.T) {
	t.Parallel()
	var facts []string
	for _, d := range dialects {
		facts = append(facts, d.fingerprint, d.loaded, d.show)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if name == "dialects.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				for _, fact := range facts {
					if strings.Contains(lit.Value, fact) {
						t.Errorf("%s spells %q, a served dialect's fact: read it from its row (dialects.go)", fset.Position(lit.Pos()), fact)
					}
				}
			}
			return true
		})
	}
}
