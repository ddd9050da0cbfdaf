package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests of issue 67 (items 6 and 7): whatever the size of a state
// file, ralph answers promptly in bounded memory, with one sentence when
// it refuses a file, and changes nothing it refused to read.

// boundedRSS is far above what these commands need (tens of megabytes)
// and far below what they took before (gigabytes): a read that grows with
// the file fails it.
const boundedRSS = 400 << 20

// boundedLimit is how long one of these commands may take before it
// counts as hung: they took minutes, or for ever, before.
const boundedLimit = 60 * time.Second

// ralphMeasured runs ralph in dir like ralph(), and returns its peak
// resident memory too.
func ralphMeasured(t *testing.T, dir string, env []string, args ...string) (runResult, int64) {
	t.Helper()
	return ralphMeasuredUnder(t, boundedRSS, dir, env, args...)
}

// ralphMeasuredUnder is ralphMeasured with a bound of its own; 0 bounds
// nothing (a test under the race detector, which takes several times the
// memory of the program it watches, only logs the peak).
func ralphMeasuredUnder(t *testing.T, bound int64, dir string, env []string, args ...string) (runResult, int64) {
	t.Helper()
	stats, peak := ownPeak(t)
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env = dir, append(env[:len(env):len(env)], stats)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(boundedLimit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	r := runResult{stdout: out.String(), stderr: errb.String(), dur: time.Since(start)}
	if !hung.Stop() {
		t.Fatalf("ralph %q still ran after %s", args, boundedLimit)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	rss := peak()
	if bound > 0 && rss > bound {
		t.Errorf("ralph %q peaked at %d MB of memory", args, rss>>20)
	}
	return r, rss
}

// fileFingerprint is what shows a file unchanged: its size, modification
// time and the hash of its bytes.
func fileFingerprint(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s %x", fi.Size(), fi.ModTime(), h.Sum(nil))
}

// grow makes the log at path size bytes longer with copies of line after
// its first line (a checkpoint log's baseline stays first): what a long
// session leaves. Written through a buffer, 200 MB take well under a
// second.
func grow(t *testing.T, path, line string, size int) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(old), "\n")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(first + "\n")
	for n := 0; n < size; n += len(line) {
		w.WriteString(line)
	}
	w.WriteString(rest)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// oneSession runs one one-shot in a fresh git project, so that -c has a
// session (with a checkpoint log) to go on with.
func oneSession(t *testing.T, env []string) string {
	t.Helper()
	dir := t.TempDir()
	setup := exec.Command("git", "init", "-q")
	setup.Dir, setup.Env = dir, env
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	srv := inlineServer(t, `{"name":"write","responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"a\\n\"}"}]},
		{"text":"done"}]}`)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "write a"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	return dir
}

// closedPort is a model endpoint nobody listens on: -c then ends with
// one sentence about the endpoint, after everything it reads at the start.
const closedPort = "http://127.0.0.1:9/v1"

// writeGraphTasks writes dir/RALPH_TASKS.md: 10,000 tasks, every third
// waiting for the one before it, the last sharing the first's id.
func writeGraphTasks(t testing.TB, dir string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	for i := 0; i < 10_000; i++ {
		id, dep := fmt.Sprintf("t%d", i), ""
		if i == 9_999 {
			id = "t0"
		}
		if i > 0 && i%3 == 0 {
			dep = fmt.Sprintf(" depends=t%d", i-1)
		}
		fmt.Fprintf(&b, "- [ ] task number %d <!-- ralph:id=%s%s -->\n", i, id, dep)
	}
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStatusGraphTenThousandTasksSharingAnID: status --graph of 10,000
// tasks, two of which share an id, ends promptly in bounded memory
// (before: 165 s for the tasks alone, and without end, growing to 16 GB,
// with the shared id), takes each task once, and names the shared id in
// one sentence.
func TestStatusGraphTenThousandTasksSharingAnID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeGraphTasks(t, dir)
	r, _ := ralphMeasured(t, dir, cleanEnv(t), "status", "--graph")
	if r.code != 0 {
		t.Fatalf("status --graph: exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var steps, problems []string
	for _, l := range lines {
		if strings.HasPrefix(l, "! ") {
			problems = append(problems, l)
		} else {
			steps = append(steps, l)
		}
	}
	if len(steps) != 10_000 {
		t.Errorf("status --graph lists %d tasks, want each of the 10000 once", len(steps))
	}
	want := `! Task id "t0" is used on lines 3, 10002; only the first of them can be addressed by it.`
	if len(problems) != 1 || problems[0] != want {
		t.Errorf("problems %q, want the one sentence %q", problems, want)
	}
}

// TestStateFileTooLargeIsRefusedInOneSentence: a 200 MB RALPH_TASKS.md
// (before: 40 s and 3.6 GB for status, and rewritten by -c) or
// .ralph/config.toml (10 s and 900 MB for -c) is refused by status, -c
// and run in one sentence that names the file and the limit, with exit 2,
// and the file is left byte for byte.
func TestStateFileTooLargeIsRefusedInOneSentence(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	for _, tc := range []struct {
		file, limit string
		cmds        [][]string
		// size is the file's size, 200 MB when 0; own puts the file in
		// the session's own directory.
		size string
		own  bool
	}{
		{file: "RALPH_TASKS.md", limit: "16.0 MB", cmds: [][]string{{"status"}, {"status", "--graph"}, {"-c", "hi", "--base-url", closedPort}, {"run", "--base-url", closedPort}}},
		{file: ".ralph/config.toml", limit: "1.0 MB", cmds: [][]string{{"-c", "hi", "--base-url", closedPort}}},
		// The session records (issue 89, item 6): a 1.1 MB summary gave
		// status exit 0 "status none", and a 1.1 MB session's own record
		// was renamed aside as corrupt.
		{file: ".ralph/session.json", limit: "1.0 MB", size: "1.1", cmds: [][]string{{"status"}, {"-c", "hi", "--base-url", closedPort}, {"run", "--base-url", closedPort}}},
		{file: "session.json", limit: "1.0 MB", size: "1.1", own: true, cmds: [][]string{{"-c", "hi", "--base-url", closedPort}, {"resume", "--base-url", closedPort}}},
	} {
		name := filepath.Base(tc.file)
		if tc.own {
			name = "own " + name
		}
		t.Run(name, func(t *testing.T) {
			dir := oneSession(t, env)
			path := filepath.Join(dir, tc.file)
			if tc.own {
				path = filepath.Join(sessionDir(t, dir), tc.file)
			}
			size, shown := int64(200<<20), "200.0 MB"
			if tc.size == "1.1" {
				size, shown = 1_153_434, "1.1 MB"
			}
			// A valid head, then a hole: 200 MB on the file's size, none
			// on the disk.
			if err := os.WriteFile(path, []byte("# a comment and a task\n- [ ] a task\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, size); err != nil {
				t.Fatal(err)
			}
			before := fileFingerprint(t, path)
			for _, args := range tc.cmds {
				r, _ := ralphMeasured(t, dir, env, args...)
				want := fmt.Sprintf("ralph: %s is %s, more than the %s ralph reads of such a file, so ralph left it as it is\n", path, shown, tc.limit)
				if r.code != 2 || r.stderr != want {
					t.Errorf("ralph %q: exit %d, stderr\n%q\nwant exit 2 and\n%q", args, r.code, r.stderr, want)
				}
			}
			if after := fileFingerprint(t, path); after != before {
				t.Errorf("%s changed: %s, was %s", tc.file, after, before)
			}
			if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) > 0 {
				t.Errorf("%s was set aside as corrupt: %q", tc.file, aside)
			}
		})
	}
}

// TestLongSessionLogsAreReadInBoundedMemory: a session whose events.jsonl
// or checkpoints.jsonl a long run grew to 200 MB (before: 27 s and 2 GB,
// and 11 s and 900 MB, for -c) goes on with -c promptly in bounded
// memory, to the sentence about the endpoint; status reads it as fast.
func TestLongSessionLogsAreReadInBoundedMemory(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	for _, log := range []string{"events.jsonl", "checkpoints.jsonl"} {
		t.Run(log, func(t *testing.T) {
			dir := oneSession(t, env)
			path := filepath.Join(sessionDir(t, dir), log)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The log's last line, again and again.
			lines := strings.SplitAfter(string(data), "\n")
			line := lines[len(lines)-2]
			grow(t, path, line, 200<<20)
			for _, args := range [][]string{{"status"}, {"-c", "hi", "--base-url", closedPort}} {
				r, _ := ralphMeasured(t, dir, env, args...)
				switch {
				case args[0] == "status" && r.code != 0:
					t.Errorf("status: exit %d\n%s", r.code, r.stderr)
				case args[0] == "-c" && (r.code != 2 || !strings.Contains(r.stderr, "cannot reach the model endpoint")):
					t.Errorf("-c: exit %d, want 2 and the endpoint's sentence\n%s", r.code, r.stderr)
				}
			}
		})
	}
}
