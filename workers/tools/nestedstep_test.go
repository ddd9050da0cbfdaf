package tools

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestEveryToolRunIsStepped: a tool runs only through stepped, which has
// the nested guard check after every call of a tool that may write
// (nestedstep.go). Every call of a Tool's Run in this package (Toolset's
// call, a View's own tools) sits in the function stepped runs; the rest
// of ralph reaches tools only through Toolset.Call and View.Call. A new
// route to Run that goes around stepped fails here.
func TestEveryToolRunIsStepped(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		stepped, bare := toolRuns(t, name, string(src))
		found += stepped
		for _, b := range bare {
			t.Errorf("%s:%s runs a tool outside stepped: the nested guard would not check after it; run it as t.stepped(name, func() workers.Result { … })", name, b)
		}
	}
	if found < 2 {
		t.Errorf("found %d stepped runs, want Toolset's and View's", found)
	}
}

// TestToolRunsGuardSeesAPlantedRoute is the guard's self-test: a Run
// call outside stepped is found, one inside it is not.
func TestToolRunsGuardSeesAPlantedRoute(t *testing.T) {
	src := `package tools

func (t *Toolset) fast(ctx context.Context, tool Tool, args json.RawMessage) workers.Result {
	return tool.Run(ctx, args)
}

func (t *Toolset) slow(ctx context.Context, tool Tool, args json.RawMessage) workers.Result {
	return t.stepped("x", func() workers.Result { return tool.Run(ctx, args) })
}
`
	stepped, bare := toolRuns(t, "planted.go", src)
	if stepped != 1 || len(bare) != 1 || bare[0] != "4" {
		t.Errorf("stepped %d, bare %q; want one of each, the bare one on line 4", stepped, bare)
	}
}

// toolRuns counts the calls X.Run(a, b) in src that lie in a function
// passed to stepped, and lists the lines of those that do not.
func toolRuns(t *testing.T, name, src string) (stepped int, bare []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Run" {
			return true
		}
		if inStepped(stack) {
			stepped++
		} else {
			bare = append(bare, fmt.Sprint(fset.Position(call.Pos()).Line))
		}
		return true
	})
	return stepped, bare
}

// inStepped reports whether the innermost function literal of stack is
// an argument of a call of stepped.
func inStepped(stack []ast.Node) bool {
	for i := len(stack) - 1; i > 0; i-- {
		if _, ok := stack[i].(*ast.FuncLit); !ok {
			continue
		}
		call, ok := stack[i-1].(*ast.CallExpr)
		if !ok {
			return false
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			return fn.Sel.Name == "stepped"
		case *ast.Ident:
			return fn.Name == "stepped"
		}
		return false
	}
	return false
}
