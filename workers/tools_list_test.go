package workers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryToolIsInTheOneList checks the shape of the tools: every row of
// the list has its <key>.md and a Go file of its own beside it (the task
// loop's complete_task shares complete_task.go), every .md here is a
// row's, and every tool this package makes, spawn_agent and the review's
// included, is a row's definition.
func TestEveryToolIsInTheOneList(t *testing.T) {
	keys := map[string]bool{}
	for _, row := range tools {
		keys[row.key] = true
		if _, err := os.Stat(row.key + ".md"); err != nil {
			t.Errorf("tool %s has no %s.md beside it", row.key, row.key)
		}
		if _, err := os.Stat(strings.TrimSuffix(row.key, "_loop") + ".go"); err != nil {
			t.Errorf("tool %s has no file %s.go of its own", row.key, row.key)
		}
	}
	mds, _ := filepath.Glob("*.md")
	for _, md := range mds {
		if !keys[strings.TrimSuffix(md, ".md")] {
			t.Errorf("%s describes no tool of the list in tools.go", md)
		}
	}
	for _, d := range goldenDefs(t) {
		found := false
		for _, row := range tools {
			if def := Def(row.key); def.Name == d.Name && def.Description == d.Description {
				found = true
			}
		}
		if !found {
			t.Errorf("the tool %s is made outside the list of tools.go", d.Name)
		}
	}
}

// TestOneToolAdapter fails when a Go file of workers or coordinator
// builds a tool definition itself (a ToolDef literal) or adapts a tool
// with a type of its own (a Def method): every tool takes its definition
// from the list (Def) and is adapted by NewTool. An MCP server's tools
// are defined by the server, so workers/mcp is left out; so is
// coordinator/llm/endpoint.go, whose one tool is `ralph doctor`'s probe
// of whether the endpoint takes tools at all, never offered to a model
// at work.
func TestOneToolAdapter(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"workers", "coordinator"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "workers/mcp" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "workers/tools.go" || rel == "coordinator/llm/endpoint.go" {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if isToolDef(n.Type) {
						t.Errorf("%s: a ToolDef built outside the list; use workers.Def", fset.Position(n.Pos()))
					}
				case *ast.FuncDecl:
					if n.Recv != nil && n.Name.Name == "Def" {
						t.Errorf("%s: a tool adapter of its own; use workers.NewTool", fset.Position(n.Pos()))
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func isToolDef(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "ToolDef"
	case *ast.SelectorExpr:
		return e.Sel.Name == "ToolDef"
	}
	return false
}
