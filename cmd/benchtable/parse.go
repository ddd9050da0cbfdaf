package main

import (
	"bufio"
	"io"
	"regexp"
	"strings"
)

// row is one benchmark's figures, or, with failure set, a benchmark (or
// a package whose benchmarks could not run) that failed or skipped, and
// the line that says why.
type row struct {
	pkg, name string
	metrics   [][2]string // value, unit in order
	failure   string
}

var (
	// benchLine is a benchmark's result: its name with GOMAXPROCS after
	// a dash, the iterations, then value-unit pairs.
	benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)
	// startLine is a benchmark's bare name, which -v prints as it starts;
	// its messages follow it.
	startLine = regexp.MustCompile(`^Benchmark(\S+)$`)
	// endLine ends a benchmark that failed or skipped (-v prints SKIP
	// only then), or, as BENCH, one that logged; indented for a
	// sub-benchmark. Without -v the benchmark's messages follow it.
	endLine = regexp.MustCompile(`^\s*--- (FAIL|SKIP|BENCH): Benchmark(\S+?)(-\d+)?(?: \(.*\))?$`)
	// message is a line a benchmark logged (t.Log, Error, Fatal, Skip),
	// or the testing package for it (a race detected): indented,
	// "file.go:line: words". Its further lines are indented deeper and
	// carry no place.
	message = regexp.MustCompile(`^\s+(\S+\.go:\d+: .*)$`)
	// compileError is a line of a package that did not build.
	compileError = regexp.MustCompile(`^(?:vet: )?(\S+\.go:\d+:\d+: .*)$`)
	// panicLine is a panic, the name of the benchmark that was running
	// before it when go test printed that name without -v.
	panicLine = regexp.MustCompile(`^(?:Benchmark(\S+?)(?:-\d+)?\s+)?(panic: .*)$`)
	// pkgFailed is go test's last line of a package that failed.
	pkgFailed = regexp.MustCompile(`^FAIL\s+(\S+)(\s.*)?$`)
)

// parse reads go test's output into rows in the order it printed them.
// A benchmark's reason is the last message it logged before it ended (the
// Fatal that stopped it, or its Skip); a package that failed without a
// benchmark to blame (it did not build, or panicked) is a row of its
// own, "(package)", with the panic or the first compile error.
func parse(r io.Reader) ([]row, error) {
	var rows []row
	pkg := ""
	// current is the benchmark whose messages the next lines are; its
	// messages are kept in said until it ends. With -v they come before
	// its end line; without, a FAIL's come after it, and failed points at
	// its row until they have.
	current := ""
	said := map[string]string{}
	failed := -1
	blamed := map[string]bool{} // packages with a failed benchmark
	buildErr, panicked := "", ""
	running := false // in a panic's list of the running tests
	prefix := ""     // of the reason of the row failed points at
	fail := func(name, why string) {
		// A parent that said nothing failed because this sub-benchmark
		// did; it has no row of its own.
		if i := len(rows) - 1; i >= 0 && rows[i].pkg == pkg && strings.HasPrefix(name, rows[i].name+"/") && strings.HasSuffix(rows[i].failure, nothing) {
			rows = rows[:i]
		}
		rows = append(rows, row{pkg: pkg, name: name, failure: why})
		blamed[pkg] = true
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := panicLine.FindStringSubmatch(line); m != nil && panicked == "" {
			// Without -v, the name of the benchmark that was running
			// precedes it on the same line.
			panicked = m[2]
			if m[1] != "" {
				current = m[1]
			}
			continue
		}
		if running {
			if name, ok := strings.CutPrefix(strings.TrimSpace(line), "Benchmark"); ok {
				name, _, _ = strings.Cut(name, " ")
				fail(name, panicked)
				continue
			}
			running = strings.HasPrefix(line, "\t") && line != ""
		}
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
			buildErr, panicked, current, failed = "", "", "", -1
		case strings.HasPrefix(line, "# "):
			buildErr = "" // a package's compile errors follow
		case panicked != "" && strings.TrimSpace(line) == "running tests:":
			running = true
		case endLine.MatchString(line):
			m := endLine.FindStringSubmatch(line)
			name := m[2]
			current, failed = name, -1
			if m[1] == "BENCH" {
				continue
			}
			why := said[name]
			if why == "" && hasFailedChild(rows, pkg, name) {
				continue // a parent that failed because a sub-benchmark did
			}
			prefix = ""
			if m[1] == "SKIP" {
				prefix = "skipped: "
			}
			quiet := why == ""
			if quiet {
				why = nothing
			}
			fail(name, prefix+why)
			if quiet {
				failed = len(rows) - 1 // its messages may follow
			}
		case startLine.MatchString(line):
			current, failed = startLine.FindStringSubmatch(line)[1], -1
			delete(said, current)
		case message.MatchString(line):
			msg := message.FindStringSubmatch(line)[1]
			if failed >= 0 {
				// Without -v: the last message after the FAIL line.
				rows[failed].failure = prefix + msg
			} else if current != "" {
				said[current] = msg
			}
		case compileError.MatchString(line):
			if buildErr == "" {
				buildErr = compileError.FindStringSubmatch(line)[1]
			}
		case pkgFailed.MatchString(line):
			p := pkgFailed.FindStringSubmatch(line)[1]
			if !blamed[p] {
				why := "go test failed without a benchmark to blame; see its output"
				switch {
				case panicked != "":
					why = panicked
				case buildErr != "":
					why = "does not build: " + buildErr
				}
				saved := pkg
				pkg = p
				if panicked != "" && current != "" {
					fail(current, why)
				} else {
					fail("(package)", why)
				}
				pkg = saved
			}
			buildErr, panicked, current, failed = "", "", "", -1
		default:
			m := benchLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			f := strings.Fields(m[4])
			rw := row{pkg: pkg, name: m[1]}
			for i := 0; i+1 < len(f); i += 2 {
				rw.metrics = append(rw.metrics, [2]string{f[i], f[i+1]})
			}
			rows = append(rows, rw)
			current, failed = "", -1
		}
	}
	return rows, sc.Err()
}

// nothing is the reason of a benchmark that failed without a message.
const nothing = "(it said nothing)"

// hasFailedChild reports whether a sub-benchmark of name in pkg has a
// failure row.
func hasFailedChild(rows []row, pkg, name string) bool {
	for _, r := range rows {
		if r.failure != "" && r.pkg == pkg && strings.HasPrefix(r.name, name+"/") {
			return true
		}
	}
	return false
}
