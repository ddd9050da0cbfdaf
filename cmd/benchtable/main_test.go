package main

import (
	"bytes"
	"strings"
	"testing"
)

// verbose and plain are go test's own output (Go 1.26) of five benchmarks
// of a scratch package: one that logs, one that fails, one that skips, one
// whose second sub-benchmark fails, and one after them; with and without
// -v, which alone prints a skip.
const verbose = `goos: linux
goarch: amd64
pkg: x
cpu: AMD EPYC
BenchmarkOK
    x_test.go:3: a log
BenchmarkOK-2      	       1	   3983484 ns/op	         3.000 median-ms
BenchmarkFail
    x_test.go:4: it broke: why
        second line
--- FAIL: BenchmarkFail
BenchmarkSkip
    x_test.go:5: no strace here
--- SKIP: BenchmarkSkip
BenchmarkSub
BenchmarkSub/100
BenchmarkSub/100-2 	       1	      2504 ns/op	         1.000 ms/task
BenchmarkSub/1000
    x_test.go:8: sub broke
--- FAIL: BenchmarkSub/1000
--- FAIL: BenchmarkSub
BenchmarkAfter
BenchmarkAfter-2            	       1	      4136 ns/op	         3.000 median-ms
FAIL
exit status 1
FAIL	x	0.131s
FAIL
`

const plain = `goos: linux
goarch: amd64
pkg: x
cpu: AMD EPYC
BenchmarkOK-2      	       1	     67059 ns/op	         3.000 median-ms
--- BENCH: BenchmarkOK-2
    x_test.go:3: a log
--- FAIL: BenchmarkFail
    x_test.go:4: it broke: why
        second line
BenchmarkSub/100-2 	       1	      4566 ns/op	         1.000 ms/task
--- FAIL: BenchmarkSub/1000
    x_test.go:8: sub broke
--- FAIL: BenchmarkSub
BenchmarkAfter-2            	       1	      4246 ns/op	         3.000 median-ms
FAIL
exit status 1
FAIL	x	0.264s
FAIL
`

// summary is each row as "name: reason" or "name: metric=value ...".
func summary(rows []row) []string {
	var out []string
	for _, r := range rows {
		s := r.pkg + " " + r.name + ":"
		if r.failure != "" {
			s += " FAIL " + r.failure
		}
		for _, m := range r.metrics {
			s += " " + m[1] + "=" + m[0]
		}
		out = append(out, s)
	}
	return out
}

// TestFailuresAreRowsWithTheirReason: a benchmark that failed or skipped
// is a row with the last line it logged (the Fatal or Skip that ended
// it), in either of go test's formats; a parent that failed only because
// a sub-benchmark did has no row.
func TestFailuresAreRowsWithTheirReason(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in   string
		want []string
	}{
		"verbose": {verbose, []string{
			"x OK: ns/op=3983484 median-ms=3.000",
			"x Fail: FAIL x_test.go:4: it broke: why",
			"x Skip: FAIL skipped: x_test.go:5: no strace here",
			"x Sub/100: ns/op=2504 ms/task=1.000",
			"x Sub/1000: FAIL x_test.go:8: sub broke",
			"x After: ns/op=4136 median-ms=3.000",
		}},
		"plain": {plain, []string{
			"x OK: ns/op=67059 median-ms=3.000",
			"x Fail: FAIL x_test.go:4: it broke: why",
			"x Sub/100: ns/op=4566 ms/task=1.000",
			"x Sub/1000: FAIL x_test.go:8: sub broke",
			"x After: ns/op=4246 median-ms=3.000",
		}},
		"a package that does not build, and a timeout": {`# github.com/ralph-dev/ralph/memory [github.com/ralph-dev/ralph/memory.test]
memory/x_test.go:12:3: undefined: foo
memory/x_test.go:13:3: undefined: bar
FAIL	github.com/ralph-dev/ralph/memory [build failed]
pkg: github.com/ralph-dev/ralph/workers/tools
BenchmarkSearch-2   	     100	  3000000 ns/op	 3169531 B/op	   35160 allocs/op
BenchmarkSlow-2   	panic: test timed out after 10m0s
	running tests:
		BenchmarkSlow (10m0s)

goroutine 1 [running]:
FAIL	github.com/ralph-dev/ralph/workers/tools	600.1s
ok  	github.com/ralph-dev/ralph/workers/x	0.5s
`, []string{
			"github.com/ralph-dev/ralph/memory (package): FAIL does not build: memory/x_test.go:12:3: undefined: foo",
			"github.com/ralph-dev/ralph/workers/tools Search: ns/op=3000000 B/op=3169531 allocs/op=35160",
			"github.com/ralph-dev/ralph/workers/tools Slow: FAIL panic: test timed out after 10m0s",
		}},
		"a benchmark's panic": {`pkg: x
BenchmarkBoom
panic: runtime error: index out of range [5] with length 5 [recovered]

goroutine 7 [running]:
FAIL	x	0.1s
`, []string{"x Boom: FAIL panic: runtime error: index out of range [5] with length 5 [recovered]"}},
	} {
		rows, err := parse(strings.NewReader(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(rows); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// TestTableCountsFailuresAndTargets: the table says FAIL and why on a
// failed benchmark's row, pass or fail against a target (a sub-benchmark's
// by its parent's "/" target), and print returns how many failed, which
// is what the exit status follows.
func TestTableCountsFailuresAndTargets(t *testing.T) {
	t.Parallel()
	rows := []row{
		{pkg: module + "/e2e", name: "RunPlan/100", metrics: [][2]string{{"1.1", "last/first"}, {"80", "ms/task"}}},
		{pkg: module + "/e2e", name: "RunPlan/10000", metrics: [][2]string{{"1.2", "last/first"}, {"1.3", "per-task/100-tasks"}}},
		{pkg: module + "/e2e", name: "HardStop64", failure: "bench_agents_test.go:199: only 12 commands started"},
		{pkg: module + "/e2e", name: "HardStop", metrics: [][2]string{{"0", "orphans"}, {"150", "p99-ms"}}},
	}
	var out bytes.Buffer
	if failed := print(&out, rows); failed != 1 {
		t.Errorf("print counted %d failures, want 1", failed)
	}
	table := out.String()
	for _, want := range []string{
		"RunPlan/100    last/first          1.1    ≤ 1.2     pass",
		"RunPlan/10000  last/first          1.2    ≤ 1.2     pass",
		"RunPlan/10000  per-task/100-tasks  1.3    ≤ 1.2     fail",
		"HardStop64     -                   FAIL             bench_agents_test.go:199: only 12 commands started\n",
		"HardStop       orphans             0      0         pass",
		"HardStop       p99-ms              150    < 100 ms  fail",
		"3 benchmarks ran, 1 failed or skipped; targets: 3 pass, 2 fail",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}
