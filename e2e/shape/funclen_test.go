// Package shape holds guards on the shape of the module's own code that
// need no built ralph: they read the source.
package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is how long a function's body may be. A function past it
// does several things in a row that a reader must hold at once; split
// into named steps, each says what it does.
const maxFuncLines = 100

// longTables are the functions that may pass maxFuncLines because they
// are tables of data, one row a line or a few, which read best whole;
// each says what its rows are. Key: the file, a colon and the function.
var longTables = map[string]string{
	"workers/tools/tools.go:init":             "the tool list, a row per tool: its name, parameters, roles and constructor",
	"scripts/cli/settings.go:sessionSettings": "the rows of `ralph config`, a row per setting: its flag, key, variable, and how it is shown, applied and carried",
}

// skipped are the folders the guard does not read, each with why.
var skipped = map[string]string{
	"third_party": "copies of other projects' code, kept as their authors wrote them so that updates apply",
	"testdata":    "inputs of tests, not ralph's code",
}

// TestNoFunctionIsOverAHundredLines: no function of the module's own
// non-test code, ralph-temporal's included, has a body over
// maxFuncLines lines, but the data tables of longTables.
func TestNoFunctionIsOverAHundredLines(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	long := longFuncs(t, root)
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.key] = true
		if _, ok := longTables[f.key]; ok {
			continue
		}
		t.Errorf("%s: %s is %d lines long, over %d: split it into named steps (or, if it is a table of data, add it to longTables saying what its rows are)",
			f.pos, f.name, f.lines, maxFuncLines)
	}
	for key := range longTables {
		if !seen[key] {
			t.Errorf("longTables names %s, which is no longer over %d lines: take it out", key, maxFuncLines)
		}
	}
}

// TestTheFunctionLengthGuardMeasuresBodies: the guard counts a body's
// lines between its braces, of a function literal too.
func TestTheFunctionLengthGuardMeasuresBodies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := strings.Repeat("\t_ = 1\n", maxFuncLines+1)
	src := "package p\n\nfunc long() {\n" + body + "}\n\nfunc short() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines) + "}\n\n" +
		"var v = func() {\n" + body + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc testLong() {\n"+body+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range longFuncs(t, dir) {
		got = append(got, fmt.Sprintf("%s %d", f.key, f.lines))
	}
	want := []string{fmt.Sprintf("p.go:long %d", maxFuncLines+1), fmt.Sprintf("p.go:func literal %d", maxFuncLines+1)}
	if !slices.Equal(got, want) {
		t.Errorf("the guard found %q, want %q", got, want)
	}
}

// longFunc is a function over maxFuncLines.
type longFunc struct {
	key, name, pos string
	lines          int
}

// longFuncs lists the functions and function literals over maxFuncLines
// in the non-test Go files below root, skipped folders left out.
func longFuncs(t *testing.T, root string) []longFunc {
	t.Helper()
	var out []longFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, skip := skipped[rel]; skip || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			name, body := "", (*ast.BlockStmt)(nil)
			switch x := n.(type) {
			case *ast.FuncDecl:
				name, body = x.Name.Name, x.Body
			case *ast.FuncLit:
				name, body = "func literal", x.Body
			}
			if body == nil {
				return true
			}
			start, end := fset.Position(body.Lbrace), fset.Position(body.Rbrace)
			if lines := end.Line - start.Line - 1; lines > maxFuncLines {
				pos := fmt.Sprintf("%s:%d", rel, start.Line)
				out = append(out, longFunc{key: rel + ":" + name, name: name, pos: pos, lines: lines})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// moduleRoot is the folder of ralph's go.mod, above this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(data), "module github.com/ralph-dev/ralph\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of github.com/ralph-dev/ralph above the test")
		}
		dir = parent
	}
}
