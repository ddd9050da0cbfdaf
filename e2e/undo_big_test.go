package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/git"
)

// bigChangeSet is a repository of n committed files f/NNNNN.txt holding
// "original N", and a model that rewrites every one of them with a
// command (it answers the same way every time it is asked).
func bigChangeSet(t testing.TB, n int) (dir string, env []string, url string) {
	t.Helper()
	return bigChange(t, n, `for f in f/*.txt; do echo changed > $f; done`)
}

// bigChange is bigChangeSet with a model whose command is change.
func bigChange(t testing.TB, n int, change string) (dir string, env []string, url string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, fmt.Sprintf(`git init -q -b main && mkdir f && for i in $(seq -w 1 %d); do echo "original $i" > f/$i.txt; done &&
		git add . && git commit -qm 'files'`, n))
	command, err := json.Marshal(map[string]string{"command": change})
	if err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal(string(command))
	if err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, `{"name":"change","loop":true,"responses":[`+
		`{"tool_calls":[{"name":"run_command","arguments":`+string(args)+`}]},`+
		`{"text":"done"}]}`)
	return dir, cleanEnv(t), srv.URL
}

// checkFiles says whether every file is whole: the original text or the
// model's, never a truncated one; it returns how many are original. A
// killed undo may leave its temporary files (the next one removes them);
// otherwise there must be none.
func checkFiles(t testing.TB, dir string, n int, killed ...bool) int {
	t.Helper()
	original := 0
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%0*d", len(fmt.Sprint(n)), i)
		data, err := os.ReadFile(filepath.Join(dir, "f", name+".txt"))
		switch {
		case err != nil:
			t.Fatalf("f/%s.txt: %v", name, err)
		case string(data) == "original "+name+"\n":
			original++
		case string(data) != "changed\n":
			t.Fatalf("f/%s.txt holds %q: neither the original nor the model's", name, data)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "f", ".*ralph-restore*")); len(leftovers) > 0 && len(killed) == 0 {
		t.Fatalf("temporary files left: %v", leftovers[:min(3, len(leftovers))])
	}
	return original
}

// An undo of 10,000 changed files completes, every file byte for byte,
// in one batch rather than a git process per file (the target, which
// BenchmarkUndo10k measures, is 1.5x what git checkout takes for the
// same files), and says so in one short line. A SIGKILL at a random
// moment of an undo leaves no truncated file, and the next undo finishes
// the job.
func TestUndoTenThousandFiles(t *testing.T) {
	t.Parallel()
	const n = 10000
	dir, env, url := bigChangeSet(t, n)
	// What git itself takes to put the same files back, in this run.
	shIn(t, dir, `for f in f/*.txt; do echo changed > $f; done`)
	start := time.Now()
	shIn(t, dir, `git checkout -- f`)
	checkout := time.Since(start)

	if r := ralph(t, dir, env, nil, "--base-url", url, "-y", "rewrite every file"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := checkFiles(t, dir, n); got != 0 {
		t.Fatalf("%d files were not rewritten", got)
	}
	start = time.Now()
	u := ralph(t, dir, env, nil, "undo")
	took := time.Since(start)
	if u.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if got := checkFiles(t, dir, n); got != n {
		t.Fatalf("%d of %d files restored", got, n)
	}
	t.Logf("undo of %d files: %s; git checkout of them: %s (%.1fx)", n, took.Round(time.Millisecond), checkout.Round(time.Millisecond), float64(took)/float64(checkout))
	if len(u.stdout) > 1000 || !strings.Contains(u.stdout, "and 9,990 more") {
		t.Errorf("undo's report is %d bytes: %.300q", len(u.stdout), u.stdout)
	}
	// The figure itself is BenchmarkUndo10k's; a whole undo (ralph's start,
	// its lock, the checkpoint before the undo) stays within a generous
	// bound of git's own restore here.
	// git's figure is taken again right after, and the slower of the two
	// kept: on a busy machine the load changes between the two
	// measurements, and the bound is about ralph, not the neighbours.
	// The undone files are the committed ones, so git's checkout puts
	// back the same state the undo left.
	shIn(t, dir, `for f in f/*.txt; do echo changed > $f; done`)
	start = time.Now()
	shIn(t, dir, `git checkout -- f`)
	checkout = max(checkout, time.Since(start))
	// The target is 1.5x, and BenchmarkUndo10k measures it (the median
	// of paired runs). The bound here is far looser, 10x and 10 s more,
	// because its two figures are single runs taken seconds apart on two
	// cores the suite shares: git's checkout alone has ranged from 1.4 s
	// to 18 s within minutes beside other tests, the undo's swap and unlink
	// and git's unlink-and-create suffer the load differently, and one
	// undo took 5.2x beside four other e2e tests (4.5x and 9.1x in the
	// whole suite before the undo's writes went to four system calls a
	// file). It catches an undo that falls back to a git process per file
	// (about a hundred times git's checkout), not a slow neighbour.
	if took > 10*checkout+10*time.Second {
		t.Errorf("undo took %s, git checkout %s", took, checkout)
	}

	// Killed at a random moment, then undone again.
	if r := ralph(t, dir, env, nil, "--base-url", url, "-y", "rewrite every file"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	cmd := exec.Command(ralphBin, "undo")
	cmd.Dir, cmd.Env = dir, env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(rand.Int64N(int64(took))))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	checkFiles(t, dir, n, true)
	// The kill may come after the undo recorded itself (this undo can be
	// quicker than the first): then it is whole, and another undo would
	// rightly take the undo back. Only an unfinished one is finished.
	sessions, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*"))
	var last git.Entry
	for _, e := range git.ParseLog([]byte(readFileT(t, filepath.Join(sessions[len(sessions)-1], "checkpoints.jsonl")))) {
		if e.Kind != git.KindResume {
			last = e
		}
	}
	if last.Kind == git.KindUndo {
		if got := checkFiles(t, dir, n); got != n {
			t.Fatalf("the undo recorded itself with %d of %d files restored", got, n)
		}
		return
	}
	u = ralph(t, dir, env, nil, "undo")
	if u.code != 0 {
		t.Fatalf("the undo after a killed one: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if got := checkFiles(t, dir, n); got != n {
		t.Fatalf("after the second undo, %d of %d files restored", got, n)
	}
}

// A 600 MB tracked file changed beside two small ones: the turn's
// checkpoint holds the small files and names the big one as left out;
// the person is told, diff says so, and undo puts the small ones back
// and names the big one as not restorable.
func TestUndoBesideA600MBFile(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, `git init -q -b main && truncate -s 600M big.bin && printf 'one\n' > s1.txt && printf 'two\n' > s2.txt && git add . && git commit -qm files`)
	srv := inlineServer(t, commandScenario(t, [][]string{{"printf x >> big.bin && printf 'ONE\\n' > s1.txt && printf 'TWO\\n' > s2.txt"}}, "done"))
	env := cleanEnv(t)
	start := time.Now()
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "change them")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("the run took %s", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(r.stderr, "big.bin (600 MB) is too big to checkpoint") {
		t.Errorf("the person was not told of the big file:\n%s", r.stderr)
	}
	log := readFileT(t, filepath.Join(sessionDir(t, dir), "checkpoints.jsonl"))
	if !strings.Contains(log, `"skipped":["big.bin"]`) || !strings.Contains(log, `"path":"s1.txt"`) || !strings.Contains(log, `"path":"s2.txt"`) {
		t.Fatalf("checkpoints.jsonl:\n%s", log)
	}
	if d := ralph(t, dir, env, nil, "diff"); d.code != 0 || !strings.Contains(d.stderr, "too big to checkpoint (checkpoint_max_file_mb): big.bin") || !strings.Contains(d.stdout, "+ONE") {
		t.Fatalf("diff: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 || !strings.Contains(u.stdout, "put back s1.txt, s2.txt") || !strings.Contains(u.stdout, "cannot put back big.bin") {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if readFileT(t, filepath.Join(dir, "s1.txt")) != "one\n" || readFileT(t, filepath.Join(dir, "s2.txt")) != "two\n" {
		t.Fatal("the small files were not put back")
	}
}

// BenchmarkUndo10k: ralph undo of a change a model's command made to
// 10,000 files, against git putting back the same change made by the
// shell to the same repository (git checkout -- . && git clean -fq: the
// files it changed checked out, those it added removed), each pair taken
// one right after the other, for three changes: "overwritten" rewrites
// the 10,000 committed files, "appended" adds a line to the end of each
// (the change issue 94 measured against git checkout), "added" adds
// 10,000 new ones beside them.
// Target: undo/git at most 1.5 for each, the median of the pairs' ratios
// (a pair sees one load, the medians of the two series may not). The
// undo is one batch: the two commits' trees read on the paths' way, a
// cat-file for the contents, each file written (openat, write, close,
// renameat2, unlinkat), cut back to its old end when its change only
// added lines (openat, fstat, a lease, pread, ftruncate, close), or
// removed (unlinkat) beneath a directory descriptor held open, and its
// checkpoint takes the paths it wrote by name.
func BenchmarkUndo10k(b *testing.B) {
	const n = 10000
	for _, c := range []struct{ name, change string }{
		{"overwritten", `for f in f/*.txt; do echo changed > $f; done`},
		{"appended", `for f in f/*.txt; do echo more >> $f; done`},
		{"added", fmt.Sprintf(`for i in $(seq -w 1 %d); do echo "added $i" > f/new-$i.txt; done`, n)},
	} {
		b.Run(c.name, func(b *testing.B) { benchUndo(b, n, c.change) })
	}
}

// benchUndo is BenchmarkUndo10k of one change, a shell command.
func benchUndo(b *testing.B, n int, change string) {
	dir, env, url := bigChange(b, n, change)
	var undos, gits, ratios []time.Duration
	for range trials(b, 3) {
		shIn(b, dir, change)
		start := time.Now()
		shIn(b, dir, `git checkout -- . && git clean -fq`)
		gits = append(gits, time.Since(start))
		if got := checkFiles(b, dir, n); got != n {
			b.Fatalf("git put back %d of %d files", got, n)
		}
		if r := ralph(b, dir, env, nil, "--base-url", url, "-y", "make the change"); r.code != 0 {
			b.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		start = time.Now()
		if u := ralph(b, dir, env, nil, "undo"); u.code != 0 {
			b.Fatalf("undo: exit %d\n%s", u.code, u.stderr)
		}
		undos = append(undos, time.Since(start))
		if got := checkFiles(b, dir, n); got != n {
			b.Fatalf("%d of %d files restored", got, n)
		}
		if added, _ := filepath.Glob(filepath.Join(dir, "f", "new-*")); len(added) > 0 {
			b.Fatalf("%d added files left, as %s", len(added), added[0])
		}
		// The ratio of each pair, in thousandths (a Duration only to
		// share percentile).
		ratios = append(ratios, time.Duration(1000*float64(undos[len(undos)-1])/float64(gits[len(gits)-1])))
	}
	b.ReportMetric(ms(percentile(undos, 0.5)), "undo-ms")
	b.ReportMetric(ms(percentile(gits, 0.5)), "git-ms")
	b.ReportMetric(float64(percentile(ratios, 0.5))/1000, "undo/git")
}
