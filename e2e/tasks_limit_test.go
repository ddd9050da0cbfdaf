//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// tasksLimitRSS is what ralph run and status may take on a task list
// near the 16 MB ralph reads of one (issue 89, item 4). They took 312 to
// 509 MB when the list was split into strings, read whole again to tell
// its format and its ids' lines were built before their size was known;
// about 125 and 135 MB now.
const tasksLimitRSS = 250 << 20

// TestATaskListIsNeverWrittenPastWhatRalphReads: a 15.9 MB task list
// without ids, which the ids `ralph run` gives its tasks would take past
// the 16 MB ralph reads of such a file, is not written (it used to be, at
// 21.4 MB, after which every status and run refused it): run says so in
// one sentence, exit 2 (bad input, as a list already that large), and
// leaves the list byte for byte, nothing is worked, and
// status still reads it (issue 89, item 4). The peak memory of each is
// logged, and held under tasksLimitRSS but under the race detector.
func TestATaskListIsNeverWrittenPastWhatRalphReads(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(workModel(nil))
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	dir := t.TempDir()
	path := filepath.Join(dir, "RALPH_TASKS.md")
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	pad := strings.Repeat("x", 280)
	for i := 1; b.Len() < 15_900_000; i++ {
		fmt.Fprintf(&b, "- [ ] task %06d %s\n", i, pad)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileFingerprint(t, path)
	// The race detector takes several times the memory of what it
	// watches: there the peaks are only logged.
	bound := int64(tasksLimitRSS)
	if raceEnabled {
		bound = 0
	}
	r, rss := ralphMeasuredUnder(t, bound, dir, env, "-y", "run", "--max-iterations", "1")
	t.Logf("run: exit %d, %s, peak %d MB: %s", r.code, r.dur.Round(1e6), rss>>20, r.stderr)
	want := path + " would grow to "
	if r.code != 2 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "more than the 16.0 MB ralph reads of such a file, so ralph left it as it is") {
		t.Errorf("run: exit %d, stderr\n%s\nwant a failure that says %q", r.code, r.stderr, want)
	}
	if after := fileFingerprint(t, path); after != before {
		t.Errorf("the task list changed: %s, was %s", after, before)
	}
	if work, err := os.ReadFile(filepath.Join(dir, "work.log")); err == nil {
		t.Errorf("a task was worked:\n%.200s", work)
	}
	s, rss := ralphMeasuredUnder(t, bound, dir, env, "status")
	t.Logf("status: exit %d, %s, peak %d MB", s.code, s.dur.Round(1e6), rss>>20)
	if s.code != 0 {
		t.Errorf("status after the run: exit %d\n%s", s.code, s.stderr)
	}
}

// TestALongCycleIsNamedByItsFirstTasks: a dependency cycle of 20,000
// tasks is refused in a sentence that names its first ten and counts the
// rest, where status printed every id on one line of half a megabyte
// (issue 89, a minor item).
func TestALongCycleIsNamedByItsFirstTasks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	const n = 20_000
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- [ ] task %d <!-- ralph:id=t%d depends=t%d -->\n", i, i, i%n+1)
	}
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "status")
	want := "Tasks t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 and 19990 more (20000 in all) depend on each other in a cycle, so none of them will ever be ready."
	all := r.stdout + r.stderr
	if !strings.Contains(all, want) {
		t.Errorf("status does not say %q:\n%.2000s", want, all)
	}
	for _, l := range strings.Split(all, "\n") {
		if len(l) > 1000 {
			t.Errorf("status printed a line of %d bytes: %.200s…", len(l), l)
		}
	}
}
