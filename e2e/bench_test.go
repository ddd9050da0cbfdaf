package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
)

// The benchmarks here drive the real binary, so each reports medians and
// tail percentiles over a fixed number of trials (or b.N, if larger) as
// custom metrics; `make bench` runs them once each and prints a table.

func trials(b *testing.B, n int) int { return max(b.N, n) }

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := int(float64(len(s)-1)*p + 0.5)
	return s[idx]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkStartupVersion: wall time of `ralph --version`, which starts
// the process, prints one line from the first of ralph's packages to be
// initialised (scripts/startup) and exits (target: median ≤ 3 ms, issue
// 94). The floor under every other command, every package's
// initialisation, has its own budget (TestInitBudget), and
// OneShotSayHi's version-median-ms times it (`ralph version`).
// Each trial also starts a Go hello-world built for the benchmark, in
// turns with ralph, which goes first alternating: hello-median-ms is this
// machine's floor for starting any Go program at the time (1 to 2 ms on
// an idle machine of the kind the target was set on, 6 ms on one whose
// page faults are slow), and version/hello, the median of each pair's
// ratio, is what ralph's size and its packages' initialisation add to it,
// which the load does not move as it moves the milliseconds.
func BenchmarkStartupVersion(b *testing.B) {
	hello := helloWorld(b)
	n := trials(b, 100)
	var ds, hs []time.Duration
	ratios := make([]float64, 0, n)
	timed := func(name string, args ...string) time.Duration {
		start := time.Now()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", name, err, out)
		}
		return time.Since(start)
	}
	for i := 0; i < n; i++ {
		var d, h time.Duration
		if i%2 == 0 {
			d, h = timed(ralphBin, "--version"), timed(hello)
		} else {
			h, d = timed(hello), timed(ralphBin, "--version")
		}
		ds, hs = append(ds, d), append(hs, h)
		ratios = append(ratios, float64(d)/float64(h))
	}
	sort.Float64s(ratios)
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.9)), "p90-ms")
	b.ReportMetric(ms(percentile(hs, 0.5)), "hello-median-ms")
	b.ReportMetric(ratios[n/2], "version/hello")
}

// helloWorld builds a Go program that prints one line, with ralph's
// build's flags (no symbols, no cgo), into the benchmark's directory.
func helloWorld(b testing.TB) string {
	b.Helper()
	dir := b.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, src)
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build hello: %v: %s", err, out)
	}
	return bin
}

// BenchmarkOneShotOverhead: a 3-turn tool scenario against the fake model
// with no delays; ralph's own time is the wall time of the whole process
// minus the time the server spent answering (target: median < 30 ms of
// ralph's own, plus the ~30 ms glamour's highlighter costs at every start).
func BenchmarkOneShotOverhead(b *testing.B) {
	srv := inlineServer(b, `{"name":"three_turns_loop","loop":true,"responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"alpha\\n\"}"}]},
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"text":"all done"}]}`)
	env := cleanEnv(b)
	n := trials(b, 40)
	var own, wall []time.Duration
	for i := 0; i < n; i++ {
		dir := b.TempDir()
		before := srv.ServerTime()
		start := time.Now()
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--json", "go")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		w := time.Since(start)
		wall = append(wall, w)
		own = append(own, w-(srv.ServerTime()-before))
	}
	b.ReportMetric(ms(percentile(own, 0.5)), "own-median-ms")
	b.ReportMetric(ms(percentile(wall, 0.5)), "wall-median-ms")
	b.ReportMetric(ms(percentile(own, 0.9)), "own-p90-ms")
}

// BenchmarkOneShotSayHi: `ralph "say hi"` end to end, the plain answer
// on a pipe, against a fake model that answers "hi" at once: wall time of
// the whole process, start-up included, which is what a script calling
// ralph waits for (target: median ≤ 15 ms), and its peak resident memory
// (its own VmHWM as it ends, RALPH_MEMSTATS), with private-MB beside it:
// the part of its resident memory that is its own as it ends, without its
// binary's pages, which this machine's kernel maps a large folio at a
// time and which were 19 of 21 MB of `--version`'s peak
// (proctree.Private). private-MB has the target (≤ 8 MB; cmd/benchtable
// says why it replaced the peak's). Each trial also times `ralph version`
// right before it (the process's start, every package's initialisation
// and the command tree: `--version` alone is answered before most of the
// packages are initialised, scripts/startup), so own-median-ms, the
// median of their differences, is ralph's own work around one model call
// with start-up taken out (target: at most 8 ms). The same trial runs again in a fresh git
// repository with one commit (git-median-ms, git-own-median-ms): the git
// hardening and the checkpoints' baseline are the extra work there.
func BenchmarkOneShotSayHi(b *testing.B) {
	srv := inlineServer(b, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
	env := cleanEnv(b, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
	dir := b.TempDir()
	repo := b.TempDir()
	setup := exec.Command("bash", "-c", `git init -q && echo hi > README.md && git add -A && git commit -qm first`)
	setup.Dir, setup.Env = repo, env
	if out, err := setup.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	n := trials(b, 40)
	var wall, version, own, gitWall, gitOwn []time.Duration
	var rss, private []int64
	stats, memory := ownMemory(b)
	measured := append(env[:len(env):len(env)], stats)
	sayHi := func(dir string) (time.Duration, int64, int64) {
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "say hi")
		cmd.Dir, cmd.Env = dir, measured
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || out.String() != "hi\n" {
			b.Fatalf("say hi: %v %q", err, out.String())
		}
		peak, own := memory()
		return d, peak, own
	}
	for i := 0; i < n; i++ {
		v := exec.Command(ralphBin, "version")
		v.Dir, v.Env = dir, env
		start := time.Now()
		if out, err := v.Output(); err != nil {
			b.Fatalf("ralph version: %v %q", err, out)
		}
		vd := time.Since(start)
		d, r, p := sayHi(dir)
		g, _, _ := sayHi(repo)
		wall, version, own, rss, private = append(wall, d), append(version, vd), append(own, d-vd), append(rss, r), append(private, p)
		gitWall, gitOwn = append(gitWall, g), append(gitOwn, g-vd)
	}
	b.ReportMetric(ms(percentile(wall, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(wall, 0.9)), "p90-ms")
	b.ReportMetric(ms(percentile(version, 0.5)), "version-median-ms")
	b.ReportMetric(ms(percentile(own, 0.5)), "own-median-ms")
	b.ReportMetric(medianMB(rss), "peak-rss-MB")
	b.ReportMetric(medianMB(private), "private-MB")
	b.ReportMetric(ms(percentile(gitWall, 0.5)), "git-median-ms")
	b.ReportMetric(ms(percentile(gitOwn, 0.5)), "git-own-median-ms")
}

// medianMB is the median of byte counts, in megabytes.
func medianMB(bs []int64) float64 {
	s := slices.Clone(bs)
	slices.Sort(s)
	return float64(s[len(s)/2]) / (1 << 20)
}

// BenchmarkOneShotFsyncs: fsyncs of one `ralph "say hi"` in a project used
// before, counted by strace (target: at most 7: the session's start
// record, four with its first prompt, and its end, three), and of each
// further turn that ran tools that only read (target: at most 3; a tool
// that writes a person's file makes it durable on top of that). It fails
// without strace.
func BenchmarkOneShotFsyncs(b *testing.B) {
	needTool(b, "strace", "strace")
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if !strings.Contains(msgs[1].Content, "look around") {
			return llmtest.Response{Text: "hi"}
		}
		switch len(msgs) {
		case 2:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
		case 4:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "search", Arguments: `{"pattern":"alpha"}`}}}
		}
		return llmtest.Response{Text: "all done"}
	})
	b.Cleanup(srv.Close)
	env := cleanEnv(b)
	dir := b.TempDir()
	syncs := func(prompt string) int {
		out := filepath.Join(b.TempDir(), "strace")
		cmd := exec.Command("strace", "-f", "-c", "-o", out, "-e", "trace=fsync,fdatasync,sync_file_range,syncfs,sync",
			ralphBin, "--base-url", srv.URL, "--json", prompt)
		cmd.Dir, cmd.Env = dir, env
		if res, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", prompt, err, res)
		}
		return straceCalls(b, out)
	}
	first := syncs("say hi")
	sayHi := syncs("say hi")
	threeTurns := syncs("look around: list the files, then search them")
	b.ReportMetric(float64(sayHi), "fsyncs/one-shot")
	b.ReportMetric(float64(first), "fsyncs/first-one-shot")
	b.ReportMetric(float64(threeTurns-sayHi)/2, "fsyncs/tool-turn")
}

// straceCalls sums the calls column of a `strace -c` summary.
func straceCalls(b *testing.B, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[len(f)-1] == "total" || f[len(f)-1] == "syscall" {
			continue
		}
		// % time, seconds, usecs/call, calls, [errors,] syscall
		if c, err := strconv.Atoi(f[3]); err == nil {
			n += c
		}
	}
	return n
}

// BenchmarkHardStop: SIGINT while run_command runs `sleep 60`, to process
// exit (target: p99 < 100 ms over 50 runs, 0 orphaned processes).
func BenchmarkHardStop(b *testing.B) {
	srv := inlineServer(b, `{"name":"sleep_loop","loop":true,"responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"cut -d' ' -f5 /proc/self/stat > cmd.pid; sleep 60\"}"}]}]}`)
	env := cleanEnv(b)
	n := trials(b, 50)
	var ds []time.Duration
	orphans := 0
	for i := 0; i < n; i++ {
		dir := b.TempDir()
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "-y", "--json", "sleep")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		pgid := waitPid(b, filepath.Join(dir, "cmd.pid"))
		start := time.Now()
		_ = cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		ds = append(ds, time.Since(start))
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			b.Fatalf("exit: %v", err)
		}
		if signalGroup(pgid, 0) == nil {
			orphans++
			_ = signalGroup(pgid, syscall.SIGKILL)
		}
	}
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.99)), "p99-ms")
	b.ReportMetric(float64(orphans), "orphans")
}

func waitPid(b *testing.B, path string) int {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				return pid
			}
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatal("the command never started")
	return 0
}

// BenchmarkStatus10k: `ralph status --json` on a project whose session has
// 10,000 iterations of history (target: median < 20 ms, plus the ~30 ms
// of start-up glamour's highlighter costs).
func BenchmarkStatus10k(b *testing.B) {
	dir := b.TempDir()
	fs := afero.NewOsFs()
	id := memory.NewID(time.Now())
	sess, err := memory.CreateSession(fs, dir, id, memory.State{Status: memory.StatusCompleted, Mode: "run", StartedAt: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	var msgs, events strings.Builder
	for i := 0; i < 10_000; i++ {
		fmt.Fprintf(&msgs, `{"role":"assistant","content":"iteration %d","tool_calls":[{"id":"c%d","name":"write_file","arguments":"{\"path\":\"f%d.txt\",\"content\":\"x\"}"}]}`+"\n", i, i, i)
		fmt.Fprintf(&msgs, `{"role":"tool","content":"wrote 1 byte","tool_call_id":"c%d","name":"write_file"}`+"\n", i)
		fmt.Fprintf(&events, `{"type":"tool_call","time":"2026-11-21T00:00:00Z","session_id":"%s","agent_id":"main","turn":%d,"tool_call_id":"c%d","tool_name":"write_file"}`+"\n", id, i, i)
	}
	os.WriteFile(filepath.Join(sess.Dir, "messages.jsonl"), []byte(msgs.String()), 0o644)
	os.WriteFile(filepath.Join(sess.Dir, "events.jsonl"), []byte(events.String()), 0o644)
	var tasks strings.Builder
	tasks.WriteString("# Tasks\n\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&tasks, "- [%s] task %d\n", map[bool]string{true: "x", false: " "}[i%3 == 0], i)
	}
	os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks.String()), 0o644)
	if err := sess.SaveState(func(s *memory.State) { s.Iteration, s.Turns = 10_000, 10_000 }); err != nil {
		b.Fatal(err)
	}
	env := cleanEnv(b)
	n := trials(b, 50)
	var ds []time.Duration
	for i := 0; i < n; i++ {
		cmd := exec.Command(ralphBin, "status", "--json")
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.Output()
		ds = append(ds, time.Since(start))
		if err != nil || !strings.Contains(string(out), `"iteration": 10000`) {
			b.Fatalf("status: %v %s", err, out)
		}
	}
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.9)), "p90-ms")
}

// BenchmarkStatusGraph10k: wall time of `ralph status --graph` on a list
// of 10,000 tasks, every third waiting for the one before it and two
// sharing an id (was 165 s for the order alone, and without end with the
// shared id; target: median < 1 s, the process start included).
func BenchmarkStatusGraph10k(b *testing.B) {
	dir := b.TempDir()
	writeGraphTasks(b, dir)
	env := cleanEnv(b)
	n := trials(b, 10)
	var ds []time.Duration
	for i := 0; i < n; i++ {
		cmd := exec.Command(ralphBin, "status", "--graph")
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.Output()
		ds = append(ds, time.Since(start))
		if err != nil || strings.Count(string(out), "\n") != 10_001 {
			b.Fatalf("status --graph: %v, %d lines", err, strings.Count(string(out), "\n"))
		}
	}
	b.ReportMetric(ms(percentile(ds, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(ds, 0.9)), "p90-ms")
}

// BenchmarkOneShotCheckpoints: the same 3-turn one-shot as
// BenchmarkOneShotOverhead, in a git repository of 1,000 files (checkpoints
// at the start and after the turn that writes) and in a plain directory,
// taking turns; reports ralph's own time in each and their ratio (target
// < 1.3x). The files are older than the index, as in a repository people
// work in: files as new as their index would be hashed again ("racy git").
// The ratio is the median of each pair's (the two runs side by side, which
// goes first alternating): on a shared machine the load drifts within a
// run, and a ratio of the two medians took that drift for ralph's.
func BenchmarkOneShotCheckpoints(b *testing.B) {
	srv := inlineServer(b, `{"name":"three_turns_loop","loop":true,"responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"alpha\\n\"}"}]},
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"text":"all done"}]}`)
	env := cleanEnv(b, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
	template := b.TempDir()
	setup := exec.Command("bash", "-c", `git init -q && for d in $(seq 0 9); do mkdir d$d; for f in $(seq 0 99); do echo "$d $f" > d$d/f$f.txt; done; done && git add -A && git commit -qm files &&
		find . -path ./.git -prune -o -type f -exec touch -d @1700000000 {} + && git update-index -q --refresh`)
	setup.Dir, setup.Env = template, env
	if out, err := setup.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	n := trials(b, 30)
	own := map[bool][]time.Duration{}
	for i := 0; i < n; i++ {
		for _, inGit := range []bool{i%2 == 1, i%2 == 0} {
			dir := b.TempDir()
			if inGit {
				// A copy has new inodes and change times, so every entry
				// of the copied index is stale and each git would hash
				// all 1,000 files again; the person's own git refreshes
				// their index at their first status, as this does.
				copyRepo := exec.Command("bash", "-c", `cp -a "$0"/. . && git update-index -q --refresh`, template)
				copyRepo.Dir, copyRepo.Env = dir, env
				if out, err := copyRepo.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
			before := srv.ServerTime()
			start := time.Now()
			cmd := exec.Command(ralphBin, "--base-url", srv.URL, "--json", "go")
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			own[inGit] = append(own[inGit], time.Since(start)-(srv.ServerTime()-before))
		}
	}
	plain, git := percentile(own[false], 0.5), percentile(own[true], 0.5)
	b.ReportMetric(ms(plain), "plain-median-ms")
	b.ReportMetric(ms(git), "git-median-ms")
	ratios := make([]float64, n)
	for i := range ratios {
		ratios[i] = float64(own[true][i]) / float64(own[false][i])
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[n/2], "git/plain")
}
