// Command benchtable reads `go test -bench` output on stdin and prints one
// table of every benchmark's figures, with ralph's targets checked where a
// target exists. `make bench` pipes into it. It exits non-zero when a
// benchmark failed to run, never because a target was missed: machines
// are noisy, and the table is for people to read.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// target is a bound on one metric of one benchmark.
type target struct {
	bench, metric string
	max           float64
	label         string
}

// Targets of figures that include a process start once carried "+30" ms
// for the package initialisation of glamour's highlighter; that cost is
// gone (docs/development.md, "Start-up budget"), and so is the allowance.
var targets = []target{
	{"StartupVersion", "median-ms", 5, "≤ 5 ms"},
	{"OneShotSayHi", "median-ms", 15, "≤ 15 ms"},
	{"OneShotSayHi", "own-median-ms", 8, "≤ 8 ms"},
	{"OneShotSayHi", "peak-rss-MB", 16, "≤ 16 MB"},
	{"OneShotVsCurl", "ralph/curl", 2, "≤ 2x"},
	{"OneShotFsyncs", "fsyncs/one-shot", 6, "≤ 6"},
	{"OneShotFsyncs", "fsyncs/tool-turn", 3, "≤ 3"},
	{"OneShotOverhead", "own-median-ms", 30, "< 30 ms"},
	{"HardStop", "p99-ms", 100, "< 100 ms"},
	{"HardStop", "orphans", 0, "0"},
	{"Status10k", "median-ms", 20, "< 20 ms"},
	{"StatusGraph10k", "median-ms", 1000, "< 1 s"},
	{"TaskOrder10k", "ns/op", 100e6, "< 100 ms"},
	{"ChatHardStop", "p99-ms", 100, "< 100 ms"},
	{"ChatStartup", "median-ms", 50, "< 50 ms"},
	{"ChatKeystroke10k", "start-ms", 50, "< 50 ms"},
	{"ChatKeystroke10k", "key-p99-ms", 16, "< 16 ms (a frame)"},
	{"ChatPaste", "median-ms", 100, "< 100 ms"},
	{"Undo10k", "undo/checkout", 3, "< 3x git checkout"},
	{"Children64", "span/bare", 1.1, "< 1.1x"},
	{"Children64", "cpu-ms/child-round", 1, "< 1 ms"},
	{"HardStop64", "p99-ms", 100, "< 100 ms"},
	{"HardStop64", "orphans", 0, "0"},
	{"IdleChildMemory", "KB/idle-child", 200, "< 200 KB"},
	{"SandboxedTrue", "overhead-median-ms", 5, "< 5 ms"},
	{"Checkpoint", "median-ms", 50, "< 50 ms"},
	{"OneShotCheckpoints", "git/plain", 1.3, "< 1.3x"},
	{"OneShotHooks", "none/before", 1.02, "≤ 1.02x"},
	{"OneShotHooks", "cpu-none/before", 1.02, "≤ 1.02x"},
	{"BoundarySave", "10000/10", 1.5, "< 1.5"},
	{"LoopTask", "10000/10", 1.5, "< 1.5"},
	{"SandboxedHardStop", "p99-ms", 100, "< 100 ms"},
	{"ExecHardStop", "p99-ms", 100, "< 100 ms"},
	{"ExternalCancel", "p99-ms", 200, "< 200 ms"},
	{"ControlStop", "p99-ms", 50, "< 50 ms"},
	{"ControlStop", "socket-p99-ms", 50, "< 50 ms"},
	{"SessionPage10000", "ms/page", 300, "< 300 ms"},
	{"Replay10000", "ms/replay", 100, "< 100 ms"},
	{"ServeFollowers20", "followed/alone", 1.05, "< 1.05x"},
	{"ServeFollowers20", "cpu-followed/alone", 1.05, "< 1.05x"},
	{"ApplyPatch50", "patch/write", 1.5, "< 1.5x"},
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

type row struct {
	pkg, name string
	metrics   [][2]string // value, unit in order
}

func main() {
	rows, failed, err := parse(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(2)
	}
	print(os.Stdout, rows)
	if failed {
		os.Exit(1)
	}
}

func parse(r io.Reader, echo io.Writer) ([]row, bool, error) {
	var rows []row
	pkg := ""
	failed := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
			continue
		case strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") || strings.Contains(line, "panic:"):
			failed = true
			fmt.Fprintln(echo, line)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[4])
		rw := row{pkg: shortPkg(pkg), name: m[1]}
		for i := 0; i+1 < len(f); i += 2 {
			rw.metrics = append(rw.metrics, [2]string{f[i], f[i+1]})
		}
		rows = append(rows, rw)
	}
	return rows, failed, sc.Err()
}

const module = "github.com/ralph-dev/ralph"

func shortPkg(p string) string {
	if p == module {
		return "ralph"
	}
	return strings.TrimPrefix(p, module+"/")
}

func print(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tbenchmark\tmetric\tvalue\ttarget\t")
	fmt.Fprintln(tw, "-------\t---------\t------\t-----\t------\t")
	for _, r := range rows {
		for _, m := range r.metrics {
			if m[1] == "ns/op" && len(r.metrics) > 1 && hasCustom(r) {
				continue // the wall time of a whole fixed-trial run says nothing
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.pkg, r.name, m[1], m[0], verdict(r.name, m[1], m[0]))
		}
	}
	tw.Flush()
}

// hasCustom reports a benchmark that reports its own figures, whose ns/op
// (the wall time of a whole fixed-trial run) says nothing.
func hasCustom(r row) bool {
	for _, m := range r.metrics {
		if !strings.HasSuffix(m[1], "/op") && m[1] != "MB/s" {
			return true
		}
	}
	return false
}

func verdict(name, metric, value string) string {
	for _, t := range targets {
		if t.bench != name || t.metric != metric {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return t.label
		}
		// A bound is strict unless its label says "≤".
		if v < t.max || v == t.max && (t.max == 0 || strings.HasPrefix(t.label, "≤")) {
			return t.label + "  ok"
		}
		return t.label + "  MISSED"
	}
	return ""
}
