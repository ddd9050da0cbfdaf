// Command benchtable reads `go test -v -bench` output on stdin and prints
// one table of every benchmark's figures, with ralph's targets checked
// where a target exists (pass or fail), and a row for every benchmark
// that failed or skipped, with the line that says why. `make bench` pipes
// into it. It exits non-zero when a benchmark failed or skipped (every
// benchmark must run), never because a target was missed: machines are
// noisy, and the table is for people to read.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ralph-dev/ralph/memory/text"
)

// target is a bound on one metric of one benchmark; a bench ending in
// "/" bounds that metric of each of its sub-benchmarks.
type target struct {
	bench, metric string
	max           float64
	label         string
}

// Targets of figures that include a process start once carried "+30" ms
// for the package initialisation of glamour's highlighter; that cost is
// gone (docs/development.md, "Start-up budget"), and so is the allowance.
var targets = []target{
	// Issue 94: `--version` in 3 ms, a Go hello-world being 1–2 ms here
	// then. The benchmark reports the hello-world's time in the same run
	// (hello-median-ms) and the paired ratio (version/hello): on a machine
	// whose page faults are slow, the floor itself passes 3 ms.
	{"StartupVersion", "median-ms", 3, "≤ 3 ms"},
	{"OneShotSayHi", "median-ms", 15, "≤ 15 ms"},
	{"OneShotSayHi", "own-median-ms", 8, "≤ 8 ms"},
	// Memory of ralph's own: its anonymous and shared-memory pages as the
	// one-shot ends (3.2 MB measured). The peak resident set it replaced
	// (≤ 16 MB, measured 26) is mostly the 32 MB binary's own file pages,
	// page cache shared with every other ralph, which this kernel maps in
	// large folios around each fault: `--version` alone peaks at 21 MB.
	{"OneShotSayHi", "private-MB", 8, "≤ 8 MB (ralph's own pages)"},
	// Issue 94: the one-shot at 1.5× the floor, curl's same round trip.
	{"OneShotVsCurl", "ralph/curl", 1.5, "≤ 1.5x"},
	{"OneShotResponsesVsChat", "responses/chat", 1.05, "≤ 1.05x"},
	{"Continue401", "long/short", 1.2, "≤ 1.2x"},
	// Seven since issue 67: the session's start record is four (its
	// session.json, its first prompt, its directory and the directory's
	// name), its end three. TestOneShotFsyncs, the benchmark's own
	// comment and docs/sessions.md say seven; this said six.
	{"OneShotFsyncs", "fsyncs/one-shot", 7, "≤ 7"},
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
	// Issue 94's aim. Writing a file anew has a floor, Replace10k's
	// exchange/unlink-create (1.8 to 2.0 here): undo's atomic exchange
	// against git checkout's unlink and create. An appended file is cut
	// back in place instead, which needs no new file; added files are
	// removed on four goroutines, at the edge of the aim (1.35 to 1.55);
	// a change that rewrites files is under it because git's checkout of
	// them is itself slow (docs/git.md).
	{"Undo10k/", "undo/git", 1.5, "< 1.5x git checkout -- . && git clean"},
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
	// RunPlan's two ratios missed on these machines' long-used disk
	// (ext4 without a journal, 264 GB) and were within both on a fresh
	// ext4, journaled or not, in the same hour (docs/run.md).
	{"RunPlan/", "last/first", 1.2, "≤ 1.2"},
	{"RunPlan/", "per-task/100-tasks", 1.2, "≤ 1.2"},
	// Issue 94: the CPU of a task late in a plan of 10,000 tasks whose
	// tasks each add a file (ralph's and its git's) within 1.3× of an
	// early one's (1.2× at 3,000).
	{"RunPlan/", "cpu-last/first", 1.3, "≤ 1.3"},
	// An edit waits for a language server's diagnostics no longer than
	// its bound (the defaults: lsp_first_wait 10 s for a cold server,
	// lsp_wait 3 s after), and a second beside it for the edit itself.
	{"EditGoLSP", "cold-median-ms", 11000, "< 11 s (first wait + 1 s)"},
	{"EditGoLSP", "warm-median-ms", 4000, "< 4 s (wait + 1 s)"},
}

func main() {
	rows, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(2)
	}
	if failed := print(os.Stdout, rows); failed > 0 {
		os.Exit(1)
	}
}

const module = "github.com/ralph-dev/ralph"

func shortPkg(p string) string {
	if p == module {
		return "ralph"
	}
	return strings.TrimPrefix(p, module+"/")
}

// print writes the table and a line that counts what it shows; it
// returns how many benchmarks (or packages) failed or skipped.
func print(w io.Writer, rows []row) (failed int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tbenchmark\tmetric\tvalue\ttarget\tresult\t")
	fmt.Fprintln(tw, "-------\t---------\t------\t-----\t------\t------\t")
	benches, pass, missed := 0, 0, 0
	for _, r := range rows {
		if r.failure != "" {
			failed++
			// The reason is the line's last text, outside the columns,
			// so that a long one widens none of them.
			fmt.Fprintf(tw, "%s\t%s\t-\tFAIL\t\t%s\n", shortPkg(r.pkg), r.name, r.failure)
			continue
		}
		benches++
		for _, m := range r.metrics {
			if m[1] == "ns/op" && len(r.metrics) > 1 && hasCustom(r) {
				continue // the wall time of a whole fixed-trial run says nothing
			}
			label, result := verdict(r.name, m[1], m[0])
			switch result {
			case "pass":
				pass++
			case "fail":
				missed++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", shortPkg(r.pkg), r.name, m[1], m[0], label, result)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s ran, %d failed or skipped; targets: %s, %s\n", text.Counted(benches, "benchmark", "benchmarks"), failed,
		text.Counted(pass, "passes", "pass"), text.Counted(missed, "fails", "fail"))
	return failed
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

// verdict is the target of a benchmark's metric and whether the value
// meets it ("pass" or "fail"); both empty without a target.
func verdict(name, metric, value string) (label, result string) {
	for _, t := range targets {
		if t.metric != metric || t.bench != name && !(strings.HasSuffix(t.bench, "/") && strings.HasPrefix(name, t.bench)) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return t.label, ""
		}
		// A bound is strict unless its label says "≤".
		if v < t.max || v == t.max && (t.max == 0 || strings.HasPrefix(t.label, "≤")) {
			return t.label, "pass"
		}
		return t.label, "fail"
	}
	return "", ""
}
