package loop

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	typo "github.com/ralph-dev/ralph/memory/text"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// User-written conditions (--until, the circuit breaker, quality gates) are
// expr-lang expressions over Stats. They are compiled once,
// before any model call, against the struct's type, so a misspelt variable
// or a condition that is not true-or-false stops ralph with one sentence
// before it spends anything, rather than after an hour of work.

// Variable is one name a condition may use, for --help and docs/run.md.
type Variable struct {
	Name    string // as written in a condition, e.g. "tasks_done"
	Type    string // "int" or "float"
	Meaning string // one line
}

// variableMeanings documents each Stats field by its expr name. A test
// checks that every field has an entry, so a new figure cannot be added to
// Stats without saying what it means.
var variableMeanings = map[string]string{
	"iterations":         "loop iterations run so far",
	"tasks_open":         "tasks still open in RALPH_TASKS.md",
	"tasks_done":         "tasks done",
	"tasks_failed":       "tasks marked failed",
	"errors":             "iterations that ended in an error",
	"error_rate":         "failed iterations divided by iterations, from 0 to 1",
	"tokens":             "tokens used, input and output together",
	"cost_usd":           "money spent in US dollars (0 while the model's price is unknown)",
	"elapsed_s":          "seconds since the run started",
	"no_progress":        "consecutive iterations that completed no task",
	"same_error_repeats": "consecutive iterations that failed with the same error",
}

// variables is derived from Stats itself, so the names offered in
// messages and help are exactly the ones the compiler accepts.
var variables = func() []Variable {
	t := reflect.TypeFor[Stats]()
	out := make([]Variable, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("expr")
		if name == "" || !f.IsExported() {
			continue
		}
		typ := "int"
		if f.Type.Kind() == reflect.Float64 || f.Type.Kind() == reflect.Float32 {
			typ = "float"
		}
		out = append(out, Variable{Name: name, Type: typ, Meaning: variableMeanings[name]})
	}
	return out
}()

// knownVariables lists the names a condition may use, in Stats order,
// with their types and meanings.
func knownVariables() []Variable {
	return append([]Variable(nil), variables...)
}

// errDivisionByZero is what a condition's "/" returns for a zero divisor.
var errDivisionByZero = errors.New("division by zero")

// divFunc is the name "/" is rewritten to. Users never need to write it; it
// only has to be a name no Stats field will ever take.
const divFunc = "ralph_divide"

// divide replaces expr's "/", which follows IEEE arithmetic and would turn
// "cost_usd / tasks_done > 0.5" into +Inf > 0.5, true, and so stop a run
// after its first iteration for no reason a person could see. A zero
// divisor is an error instead, which says where to add a guard.
func divide(params ...any) (any, error) {
	a, b := toFloat(params[0]), toFloat(params[1])
	if b == 0 {
		return nil, errDivisionByZero
	}
	return a / b, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return 0 // unreachable: the overloads below admit only int and float64
}

// compileOptions are the same for every condition. The four signatures let
// expr replace "/" with divide wherever both sides are known numbers, which
// with a typed environment is everywhere that matters.
var compileOptions = []expr.Option{
	expr.Env(Stats{}),
	expr.AsBool(),
	expr.Function(divFunc, divide,
		new(func(int, int) float64), new(func(int, float64) float64),
		new(func(float64, int) float64), new(func(float64, float64) float64)),
	expr.Operator("/", divFunc),
}

// conditionError is a condition's one-sentence error. It keeps expr's error
// underneath for callers that want the details.
type conditionError struct {
	msg string
	err error
}

func (e *conditionError) Error() string { return e.msg }
func (e *conditionError) Unwrap() error { return e.err }

// CompileCondition compiles src as a boolean expression over
// Stats; what names the flag in messages ("--until"). An
// unknown name, a syntax error, or a result that is not true or false is an
// error now, with the position and, for a misspelt name, the nearest known
// one. The returned Condition is safe for concurrent use; an error while it
// runs (a division by zero) is returned, never a panic.
func CompileCondition(what, src string) (Condition, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &conditionError{msg: fmt.Sprintf("%s: the condition is empty; write one such as %q", what, "tasks_open == 0")}
	}
	prog, err := expr.Compile(src, compileOptions...)
	if err != nil {
		return nil, &conditionError{msg: what + ": " + describeCompileError(src, err), err: err}
	}
	// A compiled program is read-only, so it is shared; a VM is not, so each
	// evaluation takes one from a pool. Reusing a VM keeps its stack, which
	// saves an allocation per evaluation over vm.Run's fresh VM.
	pool := &sync.Pool{New: func() any { return new(vm.VM) }}
	return func(s Stats) (bool, error) {
		m := pool.Get().(*vm.VM)
		out, err := m.Run(prog, s)
		pool.Put(m)
		if err != nil {
			return false, &conditionError{msg: what + ": " + describeRunError(src, err), err: err}
		}
		b, ok := out.(bool)
		if !ok {
			// AsBool makes this unreachable; it is checked so that a
			// surprise in the library is an error, not a silent false.
			return false, &conditionError{msg: fmt.Sprintf("%s: the condition gave %v, not true or false", what, out)}
		}
		return b, nil
	}, nil
}

var tokenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unexpected token \w+\("(.*)"\)$`) })

// describeCompileError turns expr's compile error into the rest of one
// sentence: the problem, where it is, and what would help.
func describeCompileError(src string, err error) string {
	var fe *file.Error
	if !errors.As(err, &fe) {
		msg := err.Error()
		if got, ok := strings.CutPrefix(msg, "expected bool, but got "); ok {
			return fmt.Sprintf("the condition gives %s, not true or false; compare it, as in %q", kindPhrase(got), "tasks_done >= 5")
		}
		return msg
	}
	at := position(src, fe)
	msg := fe.Message
	if name, ok := strings.CutPrefix(msg, "unknown name "); ok {
		if isCall(src, fe) {
			s := fmt.Sprintf("unknown function %q %s", name, at)
			if sug := suggest(name, builtin.Names); len(sug) > 0 {
				s += " (did you mean " + orList(sug) + "?)"
			}
			return s
		}
		names := make([]string, len(variables))
		for i, v := range variables {
			names[i] = v.Name
		}
		s := fmt.Sprintf("unknown name %q %s", name, at)
		if sug := suggest(name, names); len(sug) > 0 {
			s += " (did you mean " + orList(sug) + "?)"
		}
		return s + "; known: " + strings.Join(names, ", ")
	}
	if msg == "unexpected token EOF" {
		return "the condition ends too soon, after " + strings.TrimPrefix(at, "at ")
	}
	if m := tokenRe().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unexpected %q %s", m[1], at)
	}
	return msg + " " + at
}

// describeRunError does the same for an error while evaluating.
func describeRunError(src string, err error) string {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err.Error()
	}
	at := position(src, fe)
	if errors.Is(err, errDivisionByZero) {
		return fmt.Sprintf("division by zero %s; guard the divisor, as in %q", at, "iterations > 0 && errors / iterations > 0.5")
	}
	return strings.TrimPrefix(fe.Message, "runtime error: ") + " " + at
}

// position names a place in src the way a person counts: columns from 1,
// and the line only when the condition has more than one.
func position(src string, fe *file.Error) string {
	if strings.Contains(src, "\n") {
		return fmt.Sprintf("at line %d, column %d", fe.Line, fe.Column+1)
	}
	return fmt.Sprintf("at column %d", fe.Column+1)
}

// isCall reports whether the unknown name at fe is followed by "(".
func isCall(src string, fe *file.Error) bool {
	r := []rune(src)
	if fe.To <= 0 || fe.To > len(r) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(string(r[fe.To:]), " \t"), "(")
}

func kindPhrase(got string) string {
	switch got {
	case "int", "float64", "float", "int64":
		return "a number"
	case "string":
		return "a string"
	case "unknown", "nil", "<nil>":
		return "no definite value"
	}
	return "a " + got
}

func orList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// suggest returns the known names a person most likely meant by name. Names
// are compared without case or underscores, so the Go field name TasksDone
// and the typo task_done both find tasks_done. The closest by edit distance
// wins when it is close enough to be a typo; then the one name sharing the
// longest start; otherwise names that contain the word typed ("done" for
// tasks_done), at most three of them.
func suggest(name string, known []string) []string {
	n := fold(name)
	if n == "" {
		return nil
	}
	best, bestD := "", -1
	for _, k := range known {
		if d := typo.Distance(n, fold(k)); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD >= 0 && bestD <= max(2, len(n)/3) && bestD < len(n) {
		return []string{best}
	}
	// A long shared start ("same_errors" for same_error_repeats) says more
	// than shared letters, as long as one name has the longest.
	bestP, ties := 0, 0
	for _, k := range known {
		switch p := commonPrefix(n, fold(k)); {
		case p > bestP:
			best, bestP, ties = k, p, 1
		case p == bestP:
			ties++
		}
	}
	if bestP >= 4 && ties == 1 {
		return []string{best}
	}
	var out []string
	if len(n) >= 3 {
		for _, k := range known {
			if fk := fold(k); strings.Contains(fk, n) || len(fk) >= 3 && strings.Contains(n, fk) {
				out = append(out, k)
			}
		}
	}
	if len(out) > 3 {
		return nil // too vague to be worth naming; the full list follows anyway
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func fold(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}
