package engine

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

// The task loop's bookkeeping lives in one place, the machine
// (coordinator/loop/machine); this package is its Temporal host and must
// not grow a copy again, as it once did (the copy lost the "nothing
// left" end, the ask path and every decision record). The guard reads
// the package's own source (tests left out) and refuses what a copy is
// made of:
//
//   - the rules' entry points in decide, other than its names (reasons,
//     error policies) and the policy's mapping from the run's
//     configuration (NewPolicy, WithDefaults): decide.Ready, Final,
//     CostSpent, the Streak, Breaker and Settlement types and the
//     breaker's verdicts may only be used by the machine;
//   - a call of a method only the policy has (SettleFailure, CanStart,
//     OutOfIterations), or of a breaker's transition (Hold, Succeeded,
//     Failed, Open, Started, Parallel) on what the machine's Breaker()
//     returns: the host may read the breaker (Record, Name), not drive it;
//   - a struct field that holds the machine's state: a name among the
//     machine's fields (attempts, notBefore, waived, lastTry, streak,
//     breaker, iterations, errs, done, failed, usage, cost, paused,
//     stopping, limitUntil, wait) or a type from decide;
//   - a decision record, or a breaker or limit-wait event, made here:
//     those are the machine's effects, which the host only carries out.
//
// It reads names, not types, so it is strict on purpose: a helper here
// that needs one of these names is a sign its work belongs in the
// machine. The step before the machine, turning what an attempt
// reported into its Outcome, is machine.Settle's; coordinator/loop's
// TestHostsBuildNoOutcome guards it in this package and the local loop
// alike.
func TestBookkeepingIsNotReimplementedInTheEngine(t *testing.T) {
	t.Parallel()
	for _, bad := range bookkeepingIn(t, ".") {
		t.Error(bad)
	}
}

// TestTheGuardCatchesACopy: the guard finds each kind of copy in a file
// written as the old workflow was.
func TestTheGuardCatchesACopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package engine

type loopWF struct {
	streak     decide.Streak
	iterations int
}

func (w *loopWF) f() {
	ready, _ := decide.Ready(nil, nil, now)
	s := w.policy.SettleFailure(1, 0, false, now)
	w.m.Breaker().Open(now, 0)
	w.emit(event.Event{Type: event.Breaker})
	_ = memory.DecisionRecord{Kind: "task_retry"}
}
`
	if err := os.WriteFile(filepath.Join(dir, "copy.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := bookkeepingIn(t, dir)
	for _, want := range []string{"field streak", "decide.Streak", "field iterations", "decide.Ready", "SettleFailure", "Breaker().Open",
		"event.Breaker", "memory.DecisionRecord"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("the guard misses %s in %q", want, got)
		}
	}
}

var (
	// decideAllowed are the names of decide the host may use.
	decideAllowed = map[string]bool{"NewPolicy": true, "Policy": true, "OnErrorRetry": true, "OnErrorSkip": true, "OnErrorAbort": true}
	policyMethods = map[string]bool{"SettleFailure": true, "CanStart": true, "OutOfIterations": true}
	breakerMoves  = map[string]bool{"Hold": true, "Succeeded": true, "Failed": true, "Open": true, "Started": true, "Parallel": true}
	stateFields   = map[string]bool{"attempts": true, "notBefore": true, "waived": true, "lastTry": true, "streak": true, "breaker": true,
		"iterations": true, "errs": true, "done": true, "failed": true, "usage": true, "cost": true, "paused": true, "stopping": true,
		"limitUntil": true, "wait": true}
	machineEvents = map[string]bool{"Breaker": true, "LimitWait": true}
)

func bookkeepingIn(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			at := func(what string) { bad = append(bad, fset.Position(n.Pos()).String()+": "+what) }
			switch n := n.(type) {
			case *ast.SelectorExpr:
				pkg, ok := n.X.(*ast.Ident)
				switch {
				case ok && pkg.Name == "decide" && !decideAllowed[n.Sel.Name] && !strings.HasPrefix(n.Sel.Name, "Reason"):
					at("decide." + n.Sel.Name + " is the machine's to use")
				case ok && pkg.Name == "event" && machineEvents[n.Sel.Name]:
					at("event." + n.Sel.Name + " events are the machine's to make")
				case ok && pkg.Name == "memory" && n.Sel.Name == "DecisionRecord":
					at("memory.DecisionRecord: decisions are the machine's to make")
				case policyMethods[n.Sel.Name]:
					at(n.Sel.Name + " is a policy rule the machine applies")
				case breakerMoves[n.Sel.Name] && isBreakerCall(n.X):
					at("Breaker()." + n.Sel.Name + " drives the machine's breaker")
				}
			case *ast.StructType:
				for _, fld := range n.Fields.List {
					for _, id := range fld.Names {
						if stateFields[id.Name] {
							bad = append(bad, fset.Position(id.Pos()).String()+": field "+id.Name+" is the machine's state")
						}
					}
				}
			}
			return true
		})
	}
	return bad
}

// isBreakerCall reports whether x is a call of a method named Breaker.
func isBreakerCall(x ast.Expr) bool {
	c, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "Breaker"
}
