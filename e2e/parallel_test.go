package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The end-to-end tests run in parallel (`make test` sets -parallel): each
// owns its directories, its homes (cleanEnv) and its servers on port 0,
// and mostly waits on the processes it started. A test that cannot share
// the machine is named here with the reason; keep the list short, since
// each one runs alone, before the parallel ones start.
var serialTests = map[string]string{
	// Measurements that other tests' load would distort.
	"TestInitBudget": "it times ralph's package initialisation against a budget",
	"TestBrowserServeEventsArriveWithin300ms":     "it measures how soon an event reaches the page",
	"TestTemporalStopEndsEveryAgentWithinASecond": "it times how soon a stop ends four agents",
	"TestProfileChildren64":                       "it profiles 64 children, a measurement (opt-in)",
	// A fixed resource.
	"TestEcosystem2Events3ObservatorySeesPermissionRequestAndSubagentStart": "the real observatory server listens on its one fixed socket, /tmp/claude-observatory.sock",
}

// TestEveryTestIsParallelOrSaysWhyNot: every Test function of the
// package calls t.Parallel() first, or is in serialTests with its reason,
// so that a new test cannot slow the suite back to a serial run unseen.
func TestEveryTestIsParallelOrSaysWhyNot(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(moduleRoot, "e2e", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var bad []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			test := fn.Name.Name
			seen[test] = true
			parallel := callsParallelFirst(fn)
			_, serial := serialTests[test]
			switch {
			case serial && parallel:
				bad = append(bad, test+" calls t.Parallel() but is in serialTests")
			case !serial && !parallel:
				bad = append(bad, test+" ("+filepath.Base(name)+") neither calls t.Parallel() first nor is in serialTests with its reason")
			}
		}
	}
	for test := range serialTests {
		if !seen[test] {
			bad = append(bad, "serialTests names "+test+", which no file declares")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// callsParallelFirst reports whether fn's first statement is
// t.Parallel() on its *testing.T.
func callsParallelFirst(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 || len(fn.Type.Params.List) != 1 || len(fn.Type.Params.List[0].Names) != 1 {
		return false
	}
	stmt, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := stmt.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parallel" {
		return false
	}
	recv, ok := sel.X.(*ast.Ident)
	return ok && recv.Name == fn.Type.Params.List[0].Names[0].Name
}
