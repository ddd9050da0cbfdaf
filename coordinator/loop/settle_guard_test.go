package loop

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An attempt's Outcome is machine.Settle's to make: a host that builds
// one itself, or sets its fields, words failures and classifies limits
// on its own again, as both hosts once did and disagreed (Temporal took
// every limit for a rate limit, said a failed verification its own way
// and left the cost out of a done task's progress entry). The guard reads
// both hosts' source, this package and ralph-temporal's engine (tests
// left out), and refuses:
//
//   - a composite literal of machine.Outcome, Limit or LastTry, or a
//     variable declared or allocated (new) as machine.Outcome;
//   - an assignment to a field of a name that holds an Outcome: a
//     parameter, result or variable of that type, or a name given the
//     value of a call that returns one (machine.Settle, a host's helper
//     that does, Counted, FailedBy).
//
// It reads names, not types, so it is strict on purpose: a host that
// needs an Outcome other than Settle's, Counted's or FailedBy's is
// settling what the machine settles.
func TestHostsBuildNoOutcome(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", filepath.Join("..", "..", "ralph-temporal", "engine")} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the host %s is not there to read: %v", dir, err)
		}
		for _, bad := range outcomesBuiltIn(t, dir) {
			t.Error(bad)
		}
	}
}

// TestTheSettlementGuardCatchesACopy: the guard finds each way of
// building an Outcome in a file planted with them.
func TestTheSettlementGuardCatchesACopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package engine

func outcome(f *inflight) machine.Outcome {
	return machine.Outcome{Task: f.task, Failure: "the worker finished without completing the task"}
}

func (w *loopWF) finish(f *inflight, out AttemptOutcome) {
	o := outcome(f)
	o.Limit = &machine.Limit{Reason: "rate_limit"}
	s := machine.Settle(w.report(f, out))
	s.Done = true
	var z machine.Outcome
	p := new(machine.Outcome)
	_, _ = z, p
}

func settle(o machine.Outcome) {
	o.LastTry = machine.LastTry{Error: "boom"}
}
`
	if err := os.WriteFile(filepath.Join(dir, "copy.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := outcomesBuiltIn(t, dir)
	for _, want := range []string{"copy.go:4:9: machine.Outcome{", "copy.go:9:2: o.Limit", "copy.go:9:13: machine.Limit{", "copy.go:11:2: s.Done",
		"copy.go:12:6: machine.Outcome declared", "copy.go:13:7: new(machine.Outcome)", "copy.go:18:2: o.LastTry", "copy.go:18:14: machine.LastTry{"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("the guard misses %s in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 8 {
		t.Errorf("the guard found %d, want 8:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// settledTypes are the machine's types only the settlement makes.
var settledTypes = map[string]bool{"Outcome": true, "Limit": true, "LastTry": true}

// isMachine reports whether x is machine.<name> for a name of names.
func isMachine(x ast.Expr, names map[string]bool) (string, bool) {
	if star, ok := x.(*ast.StarExpr); ok {
		x = star.X
	}
	s, ok := x.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := s.X.(*ast.Ident)
	if !ok || pkg.Name != "machine" || !names[s.Sel.Name] {
		return "", false
	}
	return "machine." + s.Sel.Name, true
}

var outcomeOnly = map[string]bool{"Outcome": true}

func outcomesBuiltIn(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// The functions of the package that return an Outcome, and the
	// methods of one that return another.
	makers := map[string]bool{"Settle": true, "Counted": true, "FailedBy": true}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Type.Results != nil &&
				slices.ContainsFunc(fn.Type.Results.List, func(r *ast.Field) bool { _, ok := isMachine(r.Type, outcomeOnly); return ok }) {
				makers[fn.Name.Name] = true
			}
		}
	}
	var bad []string
	at := func(pos token.Pos, what string) { bad = append(bad, fset.Position(pos).String()+": "+what) }
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				fieldsSet(fn, outcomeNames(fn, makers), at)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if name, ok := isMachine(n.Type, settledTypes); ok {
					at(n.Pos(), name+"{...}: an attempt's outcome is machine.Settle's to make")
				}
			case *ast.ValueSpec:
				if name, ok := isMachine(n.Type, outcomeOnly); ok {
					at(n.Pos(), name+" declared: an attempt's outcome is machine.Settle's to make")
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
					if name, ok := isMachine(n.Args[0], outcomeOnly); ok {
						at(n.Pos(), "new("+name+"): an attempt's outcome is machine.Settle's to make")
					}
				}
			}
			return true
		})
	}
	return bad
}

// fieldsSet finds the assignments in fn to a field of a name held holds.
func fieldsSet(fn *ast.FuncDecl, held map[string]bool, at func(token.Pos, string)) {
	ast.Inspect(fn, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for _, lhs := range a.Lhs {
			if s, ok := lhs.(*ast.SelectorExpr); ok {
				if x, ok := s.X.(*ast.Ident); ok && held[x.Name] {
					at(lhs.Pos(), x.Name+"."+s.Sel.Name+" set: an attempt's outcome is machine.Settle's to make (Counted, FailedBy)")
				}
			}
		}
		return true
	})
}

// outcomeNames are the names in fn that hold an Outcome: parameters,
// results and variables of that type, and names given the value of a
// call of makers.
func outcomeNames(fn *ast.FuncDecl, makers map[string]bool) map[string]bool {
	held := map[string]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if _, ok := isMachine(n.Type, outcomeOnly); ok {
				for _, id := range n.Names {
					held[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			if _, ok := isMachine(n.Type, outcomeOnly); ok {
				for _, id := range n.Names {
					held[id.Name] = true
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				return true
			}
			for i, rhs := range n.Rhs {
				if id, ok := n.Lhs[i].(*ast.Ident); ok && callsMaker(rhs, makers) {
					held[id.Name] = true
				}
			}
		}
		return true
	})
	return held
}

// callsMaker reports whether x is a call of a function or method named
// among makers.
func callsMaker(x ast.Expr, makers map[string]bool) bool {
	c, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		return makers[fn.Name]
	case *ast.SelectorExpr:
		return makers[fn.Sel.Name]
	}
	return false
}
