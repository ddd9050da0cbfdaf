package loop

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func mustCompile(t *testing.T, src string) Condition {
	t.Helper()
	c, err := CompileCondition("--until", src)
	if err != nil {
		t.Fatalf("CompileCondition(%q): %v", src, err)
	}
	return c
}

func TestConditionTrueAndFalse(t *testing.T) {
	s := Stats{Iterations: 6, TasksOpen: 2, TasksDone: 5, CostUSD: 1.25, ErrorRate: 0.5,
		NoProgress: 3, SameErrorRepeats: 1, ElapsedS: 90}
	cases := []struct {
		src  string
		want bool
	}{
		{"tasks_done >= 5 || cost_usd > 2", true},
		{"tasks_done >= 6 || cost_usd > 2", false},
		{"tasks_open == 0", false},
		{"no_progress >= 3 || same_error_repeats >= 3", true},
		{"error_rate > 0.5 && iterations >= 4", false},
		{"error_rate >= 0.5 and iterations >= 4", true},
		{"not (tasks_done > 1)", false},
		{"elapsed_s / 60 > 1.4", true},        // 1.5 minutes
		{"tasks_done / iterations < 1", true}, // "/" divides as numbers, not integers
		{"max(tasks_done, tasks_open) == 5", true},
		{"cost_usd * 2 == 2.5", true},
		{"true", true},
		{"tasks_done % 2 == 1", true},
		{"tasks_done >= 5 ||\n  cost_usd > 2", true},
	}
	for _, c := range cases {
		got, err := mustCompile(t, c.src)(s)
		if err != nil || got != c.want {
			t.Errorf("%q = %v, %v; want %v", c.src, got, err, c.want)
		}
	}
}

// Every Stats field must be reachable by its documented name and read
// the right field, so each one is set alone to a distinctive value.
func TestEveryVariableUsable(t *testing.T) {
	vars := knownVariables()
	if n := reflect.TypeFor[Stats]().NumField(); len(vars) != n {
		t.Fatalf("knownVariables lists %d names; Stats has %d fields", len(vars), n)
	}
	for i, v := range vars {
		if v.Meaning == "" {
			t.Errorf("variable %s has no meaning in variableMeanings", v.Name)
		}
		if v.Type != "int" && v.Type != "float" {
			t.Errorf("variable %s has type %q", v.Name, v.Type)
		}
		var s Stats
		f := reflect.ValueOf(&s).Elem().Field(i)
		if f.Kind() == reflect.Int {
			f.SetInt(7)
		} else {
			f.SetFloat(7)
		}
		c := mustCompile(t, v.Name+" == 7")
		if got, err := c(s); err != nil || !got {
			t.Errorf("%s == 7 with only that field set: %v, %v", v.Name, got, err)
		}
		if got, err := c(Stats{}); err != nil || got {
			t.Errorf("%s == 7 on zero stats: %v, %v", v.Name, got, err)
		}
	}
}

func TestKnownVariablesIsACopy(t *testing.T) {
	knownVariables()[0].Name = "changed"
	if knownVariables()[0].Name != "iterations" {
		t.Fatal("knownVariables shares its slice with callers")
	}
}

func TestConditionCompileErrors(t *testing.T) {
	cases := []struct {
		what, src string
		want      []string // substrings of the one-sentence error
	}{
		{"--until", "task_done >= 5", []string{`--until: unknown name "task_done" at column 1 (did you mean "tasks_done"?); known: iterations, tasks_open, tasks_done,`, "same_error_repeats"}},
		{"--until", "TasksDone >= 5", []string{`(did you mean "tasks_done"?)`}},
		{"--until", "cost > 2", []string{`unknown name "cost" at column 1 (did you mean "cost_usd"?)`}},
		{"--breaker", "no_progress >= 3 || same_eror_repeats >= 3", []string{`--breaker: unknown name "same_eror_repeats" at column 21 (did you mean "same_error_repeats"?)`}},
		{"--until", "tasks_done >= 5 ||\n  cst > 2", []string{`unknown name "cst" at line 2, column 3; known:`}},
		{"--until", "zzz > 1", []string{`unknown name "zzz" at column 1; known: iterations`}},
		{"--until", "maxx(tasks_done, 1) > 2", []string{`unknown function "maxx" at column 1 (did you mean "max"?)`}},
		{"--until", "tasks_done >=", []string{"--until: the condition ends too soon, after column 13"}},
		{"--until", "tasks_done >= 5 )", []string{`--until: unexpected ")" at column 17`}},
		{"--until", "tasks_done >= 'a'", []string{"--until: invalid operation: >= (mismatched types int and string) at column 12"}},
		{"--until", "tasks_done + 1", []string{`--until: the condition gives a number, not true or false; compare it, as in "tasks_done >= 5"`}},
		{"--until", "cost_usd", []string{"gives a number, not true or false"}},
		{"--until", "'done'", []string{"gives a string, not true or false"}},
		{"--until", "   ", []string{"--until: the condition is empty"}},
	}
	for _, c := range cases {
		_, err := CompileCondition(c.what, c.src)
		if err == nil {
			t.Errorf("%q compiled", c.src)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q:\n got %s\nwant it to contain %s", c.src, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%q: error spans lines: %q", c.src, msg)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"iterations", "tasks_open", "tasks_done", "tasks_failed", "errors", "error_rate",
		"tokens", "cost_usd", "elapsed_s", "no_progress", "same_error_repeats"}
	cases := map[string][]string{
		"iteration":    {"iterations"},
		"tokns":        {"tokens"},
		"CostUSD":      {"cost_usd"},
		"elapsed":      {"elapsed_s"},
		"errorrate":    {"error_rate"},
		"noprogress":   {"no_progress"},
		"tasks":        {"tasks_open", "tasks_done", "tasks_failed"},
		"x":            nil,
		"banana":       nil,
		"same_errors":  {"same_error_repeats"},
		"errors_count": {"errors"},
		"done":         {"tasks_done"},
	}
	for in, want := range cases {
		if got := suggest(in, known); !reflect.DeepEqual(got, want) {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConditionRuntimeErrors(t *testing.T) {
	zero := Stats{}
	cases := []struct{ src, want string }{
		{"tasks_done / iterations > 0.5", `--until: division by zero at column 12; guard the divisor, as in "iterations > 0 && errors / iterations > 0.5"`},
		{"cost_usd / tasks_done > 1", "--until: division by zero at column 10"},
		{"tasks_done % iterations == 0", "--until: integer divide by zero at column 12"},
	}
	for _, c := range cases {
		cond := mustCompile(t, c.src)
		got, err := cond(zero)
		if err == nil || got {
			t.Errorf("%q on zero stats = %v, %v; want an error", c.src, got, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.src, err, c.want)
		}
		// The same compiled condition keeps working once the divisor is not zero.
		if _, err := cond(Stats{Iterations: 2, TasksDone: 1}); err != nil {
			t.Errorf("%q after an error: %v", c.src, err)
		}
	}
	// A guard short-circuits the division, as the hint says.
	if got, err := mustCompile(t, "iterations > 0 && errors / iterations > 0.5")(zero); err != nil || got {
		t.Errorf("guarded division on zero stats = %v, %v", got, err)
	}
	var ce *conditionError
	_, err := mustCompile(t, "1 / tasks_done > 0")(zero)
	if !errors.As(err, &ce) || !errors.Is(err, errDivisionByZero) {
		t.Errorf("runtime error %v does not unwrap to errDivisionByZero", err)
	}
}

// Conditions are evaluated from the loop and from status reporters at the
// same time; run under -race this shows the compiled program and the VM
// pool share nothing mutable.
func TestConditionConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			// Compiling concurrently shares compileOptions, so it is
			// exercised here too.
			cond, err := CompileCondition("--until", "tasks_done >= 5 || cost_usd / iterations > 0.5")
			if err != nil {
				errs <- err
				return
			}
			for i := range 2000 {
				s := Stats{TasksDone: (g + i) % 10, Iterations: i % 3, CostUSD: float64(i % 4)}
				got, err := cond(s)
				var want bool
				var wantErr bool
				switch {
				case s.TasksDone >= 5:
					want = true
				case s.Iterations == 0:
					wantErr = true
				default:
					want = s.CostUSD/float64(s.Iterations) > 0.5
				}
				if (err != nil) != wantErr || err == nil && got != want {
					errs <- fmt.Errorf("%+v: got %v, %v; want %v (error %v)", s, got, err, want, wantErr)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkConditionEval measures one evaluation of a compiled condition:
// a plain --until, and a breaker whose division goes through the checked
// divide function (the slowest kind of condition).
func BenchmarkConditionEval(b *testing.B) {
	cases := []struct{ name, src string }{
		{"until", "tasks_done >= 5 || cost_usd > 2"},
		{"breaker", "no_progress >= 3 || same_error_repeats >= 3 || (iterations > 0 && errors / iterations > 0.5)"},
	}
	s := Stats{Iterations: 12, TasksDone: 4, Errors: 3, CostUSD: 1, NoProgress: 1, SameErrorRepeats: 1}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cond, err := CompileCondition("--until", c.src)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := cond(s); err != nil || ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

func BenchmarkConditionEvalParallel(b *testing.B) {
	cond, err := CompileCondition("--until", "tasks_done >= 5 || cost_usd > 2")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := Stats{TasksDone: 4, CostUSD: 1}
		for pb.Next() {
			if ok, err := cond(s); err != nil || ok {
				b.Error(ok, err)
				return
			}
		}
	})
}
