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
	p := &parser{said: map[string]string{}, failed: -1, blamed: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		p.line(sc.Text())
	}
	return p.rows, sc.Err()
}

// parser is parse's state between lines: what a line means depends on
// the package, benchmark and panic that earlier lines began, so each
// step reads and updates it.
type parser struct {
	rows []row
	pkg  string
	// current is the benchmark whose messages the next lines are; its
	// messages are kept in said until it ends. With -v they come before
	// its end line; without, a FAIL's come after it, and failed points at
	// its row until they have.
	current  string
	said     map[string]string
	failed   int
	blamed   map[string]bool // packages with a failed benchmark
	buildErr string
	panicked string
	running  bool   // in a panic's list of the running tests
	prefix   string // of the reason of the row failed points at
}

// line reads one line of go test's output. A panic and the list of tests
// it interrupted come first because their lines would otherwise match
// the kinds of line below.
func (p *parser) line(line string) {
	if p.notePanic(line) || p.blameRunning(line) {
		return
	}
	switch {
	case strings.HasPrefix(line, "pkg: "):
		p.pkg = strings.TrimPrefix(line, "pkg: ")
		p.buildErr, p.panicked, p.current, p.failed = "", "", "", -1
	case strings.HasPrefix(line, "# "):
		p.buildErr = "" // a package's compile errors follow
	case p.panicked != "" && strings.TrimSpace(line) == "running tests:":
		p.running = true
	case endLine.MatchString(line):
		p.endBenchmark(endLine.FindStringSubmatch(line))
	case startLine.MatchString(line):
		p.current, p.failed = startLine.FindStringSubmatch(line)[1], -1
		delete(p.said, p.current)
	case message.MatchString(line):
		p.keepMessage(message.FindStringSubmatch(line)[1])
	case compileError.MatchString(line):
		if p.buildErr == "" {
			p.buildErr = compileError.FindStringSubmatch(line)[1]
		}
	case pkgFailed.MatchString(line):
		p.endFailedPackage(pkgFailed.FindStringSubmatch(line)[1])
	default:
		p.addResult(line)
	}
}

// fail adds the failure row of benchmark name in the current package.
func (p *parser) fail(name, why string) {
	// A parent that said nothing failed because this sub-benchmark
	// did; it has no row of its own.
	if i := len(p.rows) - 1; i >= 0 && p.rows[i].pkg == p.pkg && strings.HasPrefix(name, p.rows[i].name+"/") && strings.HasSuffix(p.rows[i].failure, nothing) {
		p.rows = p.rows[:i]
	}
	p.rows = append(p.rows, row{pkg: p.pkg, name: name, failure: why})
	p.blamed[p.pkg] = true
}

// notePanic notes the package's first panic and reports whether line was
// one, since the panic is the reason of whatever failed after it.
func (p *parser) notePanic(line string) bool {
	m := panicLine.FindStringSubmatch(line)
	if m == nil || p.panicked != "" {
		return false
	}
	// Without -v, the name of the benchmark that was running
	// precedes it on the same line.
	p.panicked = m[2]
	if m[1] != "" {
		p.current = m[1]
	}
	return true
}

// blameRunning blames the panic on each benchmark in its list of running
// tests and reports whether line was one of them; the list ends at the
// first line that is not indented.
func (p *parser) blameRunning(line string) bool {
	if !p.running {
		return false
	}
	if name, ok := strings.CutPrefix(strings.TrimSpace(line), "Benchmark"); ok {
		name, _, _ = strings.Cut(name, " ")
		p.fail(name, p.panicked)
		return true
	}
	p.running = strings.HasPrefix(line, "\t") && line != ""
	return false
}

// endBenchmark ends benchmark m[2] with the outcome m[1]: a failure or skip
// becomes a row whose reason is the last thing it said, or, when it said
// nothing yet, whatever it says after this line (without -v).
func (p *parser) endBenchmark(m []string) {
	name := m[2]
	p.current, p.failed = name, -1
	if m[1] == "BENCH" {
		return
	}
	why := p.said[name]
	if why == "" && hasFailedChild(p.rows, p.pkg, name) {
		return // a parent that failed because a sub-benchmark did
	}
	p.prefix = ""
	if m[1] == "SKIP" {
		p.prefix = "skipped: "
	}
	quiet := why == ""
	if quiet {
		why = nothing
	}
	p.fail(name, p.prefix+why)
	if quiet {
		p.failed = len(p.rows) - 1 // its messages may follow
	}
}

// keepMessage keeps msg as the reason of the benchmark it belongs to: the
// failed row it follows (without -v) or the running benchmark (with -v).
func (p *parser) keepMessage(msg string) {
	if p.failed >= 0 {
		// Without -v: the last message after the FAIL line.
		p.rows[p.failed].failure = p.prefix + msg
	} else if p.current != "" {
		p.said[p.current] = msg
	}
}

// endFailedPackage ends package name, which failed: when none of its benchmarks
// took the blame, the panic or compile error that broke it becomes a row,
// so that no failed package goes unreported.
func (p *parser) endFailedPackage(name string) {
	if !p.blamed[name] {
		why := "go test failed without a benchmark to blame; see its output"
		switch {
		case p.panicked != "":
			why = p.panicked
		case p.buildErr != "":
			why = "does not build: " + p.buildErr
		}
		saved := p.pkg
		p.pkg = name
		if p.panicked != "" && p.current != "" {
			p.fail(p.current, why)
		} else {
			p.fail("(package)", why)
		}
		p.pkg = saved
	}
	p.buildErr, p.panicked, p.current, p.failed = "", "", "", -1
}

// addResult adds the row of a benchmark's result line; any other line
// is noise of go test's and is left out.
func (p *parser) addResult(line string) {
	m := benchLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	f := strings.Fields(m[4])
	rw := row{pkg: p.pkg, name: m[1]}
	for i := 0; i+1 < len(f); i += 2 {
		rw.metrics = append(rw.metrics, [2]string{f[i], f[i+1]})
	}
	p.rows = append(p.rows, rw)
	p.current, p.failed = "", -1
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
