package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The start-up budget: what package initialisation may cost in all, before
// main runs (docs/development.md, "Start-up budget"). A Go program that does
// nothing spends well under a millisecond here; everything above that is
// work some package does in init or in package-level variables, at every
// start of ralph, whether the command uses it or not.
const (
	initBudgetMillis = 2.0
	initBudgetBytes  = 1 << 20
	// --version runs at least initMinRuns and at most initMaxRuns times,
	// until the figures are within the budget: each package's clock is its
	// minimum over the runs, so that a busy machine (other tests, other
	// builds) preempting some package's init in some run does not fail the
	// test, while real init work, which every run pays, still does.
	initMinRuns = 5
	initMaxRuns = 150
)

// initCost is one run's package initialisation as GODEBUG=inittrace=1
// reports it, in all and by package.
type initCost struct {
	millis   float64
	bytes    int64
	packages map[string]initCost
}

// TestInitBudget fails when the packages ralph links do more work at
// initialisation than the budget allows, naming the three that cost most,
// so that work moved to first use (chroma's registries, templates,
// regular expressions, tables) cannot creep back into every start.
//
// Under the race detector (make test) it measures a plain build of its
// own: the race runtime adds an initialisation of its own, and skipping
// there meant the check never ran where the suite runs. The clock budget
// is for a machine that starts a Go hello-world in 1.5 ms; on a slower
// one (the virtual machines whose page faults cost 15 µs start it in 7)
// it grows in proportion. The bytes, which do not vary, keep theirs.
func TestInitBudget(t *testing.T) {
	bin := ralphBin
	if raceEnabled {
		bin = plainBuild(t)
	}
	budget := initBudgetMillis * max(1, helloStartMillis(t)/referenceHelloMillis)
	byPackage := map[string]initCost{}
	var best initCost
	runs := 0
	for runs < initMaxRuns {
		runs++
		for name, p := range measureInit(t, bin).packages {
			q, seen := byPackage[name]
			if !seen || p.millis < q.millis {
				q.millis = p.millis
			}
			if !seen || p.bytes < q.bytes {
				q.bytes = p.bytes
			}
			byPackage[name] = q
		}
		best = initCost{}
		for _, p := range byPackage {
			best.millis += p.millis
			best.bytes += p.bytes
		}
		if runs >= initMinRuns && best.millis <= budget && best.bytes <= initBudgetBytes {
			break
		}
	}
	t.Logf("package initialisation: %.2f ms, %d bytes (each package's minimum of %d runs; clock budget %.1f ms here)", best.millis, best.bytes, runs, budget)
	if best.millis <= budget && best.bytes <= initBudgetBytes {
		return
	}
	t.Errorf("package initialisation costs %.2f ms and %d bytes (budget %.1f ms on this machine, %d bytes); the largest:\n%s",
		best.millis, best.bytes, budget, initBudgetBytes, biggestInits(byPackage, 3))
}

// referenceHelloMillis is how long a Go hello-world took to start on the
// machine initBudgetMillis was set on.
const referenceHelloMillis = 1.5

// helloStartMillis is the median of eleven starts of a Go hello-world,
// built here as ralph is (static, stripped), in milliseconds.
func helloStartMillis(t *testing.T) float64 {
	t.Helper()
	bin := helloWorld(t)
	var took []time.Duration
	for range 11 {
		start := time.Now()
		if err := exec.Command(bin).Run(); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return float64(took[len(took)/2]) / float64(time.Millisecond)
}

// plainBuild is ralph built as `make build` builds it, without the race
// detector, in a directory of the test's.
func plainBuild(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ralph")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Dir, build.Env = moduleRoot, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building ralph without the race detector: %v\n%s", err, out)
	}
	return bin
}

// measureInit runs `bin version` once with the runtime's init trace:
// `--version` alone is answered before most packages are initialised
// (scripts/startup).
func measureInit(t *testing.T, bin string) initCost {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = cleanEnv(t, "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ralph version: %v\n%s", err, stderr.String())
	}
	c := initCost{packages: map[string]initCost{}}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		name, p, ok := parseInitLine(sc.Text())
		if !ok {
			continue
		}
		c.millis += p.millis
		c.bytes += p.bytes
		q := c.packages[name]
		q.millis += p.millis
		q.bytes += p.bytes
		c.packages[name] = q
	}
	if len(c.packages) == 0 {
		t.Fatalf("no init trace on standard error:\n%s", stderr.String())
	}
	return c
}

// parseInitLine reads one line of the trace:
//
//	init github.com/x/y @2.5 ms, 5.5 ms clock, 2484520 bytes, 27808 allocs
func parseInitLine(line string) (string, initCost, bool) {
	f := strings.Fields(line)
	if len(f) < 10 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," {
		return "", initCost{}, false
	}
	millis, err1 := strconv.ParseFloat(f[4], 64)
	n, err2 := strconv.ParseInt(f[7], 10, 64)
	if err1 != nil || err2 != nil {
		return "", initCost{}, false
	}
	return f[1], initCost{millis: millis, bytes: n}, true
}

// biggestInits lists the n packages that allocate most in init, with their
// clock, one a line: bytes do not vary from run to run as the clock does.
func biggestInits(byPackage map[string]initCost, n int) string {
	names := make([]string, 0, len(byPackage))
	for name := range byPackage {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := byPackage[names[i]], byPackage[names[j]]
		if a.bytes != b.bytes {
			return a.bytes > b.bytes
		}
		return a.millis > b.millis
	})
	var b strings.Builder
	for _, name := range names[:min(n, len(names))] {
		p := byPackage[name]
		fmt.Fprintf(&b, "  %s: %.2f ms, %d bytes\n", name, p.millis, p.bytes)
	}
	return b.String()
}
