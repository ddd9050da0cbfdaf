//go:build linux

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 67: a one-shot's session counts as one (its directory takes its
// name) only once its first prompt is in it and durable, so a crash at any
// moment leaves either no session or a session that holds the prompt;
// `ralph -c` never continues one without it. The faults here are real,
// injected by strace into ralph's own system calls: -b execve leaves the
// programs ralph starts (git) alone, and -P names ralph's sessions
// directory, relative and absolute, where its syscalls can be told by
// path. strace counts each thread's calls apart (-f), so a sweep over N
// does not hit the same call every time: each trial checks that it
// injected, and what it must hold holds wherever the fault landed.

// straceRun is one ralph run under strace, with what the fault did.
type straceRun struct {
	runResult
	killed bool   // SIGKILL ended it: the injection landed
	log    string // strace's own record of the calls it traced
}

// underStrace runs ralph in dir under strace with the tracing and
// injection options opts, to its end.
func underStrace(t *testing.T, dir string, env []string, opts []string, args ...string) straceRun {
	t.Helper()
	strace := needTool(t, "strace", "strace")
	logPath := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, append(append([]string{"-f", "-b", "execve", "-y", "-o", logPath}, opts...), append([]string{ralphBin}, args...)...)...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(ralphRunLimit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !hung.Stop() {
		t.Fatalf("ralph %q under strace still ran after %s; stderr:\n%s", args, ralphRunLimit, errb.String())
	}
	r := straceRun{runResult: runResult{stdout: out.String(), stderr: straceNoise(errb.String())}}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			// strace ends itself with the signal that ended ralph.
			r.killed = true
		}
	} else if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(logPath)
	r.log = string(log)
	return r
}

// straceNoise drops strace's own words from what ralph wrote to stderr.
func straceNoise(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "strace: ") && l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// sessionsPaths are -P options for the project's sessions directory, by
// the name ralph gives it and by its absolute path.
func sessionsPaths(dir string) []string {
	return []string{"-P", filepath.Join(".ralph", "sessions"), "-P", filepath.Join(dir, ".ralph", "sessions")}
}

// realTempDir is t.TempDir with its links resolved, as strace resolves
// the paths -P names.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// userContents are the person's messages of a request, in order.
func userContents(r llmtest.RecordedRequest) []string {
	var out []string
	for _, m := range r.Request.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestOneShotPromptSurvivesAnyCrash sweeps a SIGKILL over the calls of a
// one-shot's session creation, up to its first answer: the writes of its
// records, the opens in its sessions directory, the rename that puts the
// session in place and the fsync that makes the name durable. After each,
// `ralph -c "again"` either sends a conversation that holds the first
// prompt, or says in one sentence that there is no session to continue.
// (Before, a kill between the rename and the prompt's write left a
// session of a system message alone, which -c continued without a word.)
func TestOneShotPromptSurvivesAnyCrash(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	type trial struct {
		name  string
		opts  func(dir string) []string
		paths bool // the fault is filtered to the sessions directory
	}
	var trials []trial
	for n := 1; n <= 7; n++ {
		trials = append(trials, trial{fmt.Sprintf("write %d", n), func(string) []string {
			return []string{"-e", "trace=write", "-e", fmt.Sprintf("inject=write:signal=KILL:when=%d", n)}
		}, false})
	}
	for _, sc := range []struct {
		call string
		n    int
	}{{"renameat", 1}, {"fsync", 1}, {"openat", 2}, {"openat", 4}, {"openat", 6}} {
		trials = append(trials, trial{fmt.Sprintf("%s %d", sc.call, sc.n), func(dir string) []string {
			return append([]string{"-e", "trace=" + sc.call, "-e", fmt.Sprintf("inject=%s:signal=KILL:when=%d", sc.call, sc.n)}, sessionsPaths(dir)...)
		}, true})
	}
	// A one-shot that only answers opens its sessions directory about 18
	// times, over three threads or so (it takes no checkpoint), so the
	// opens swept are within what each thread makes.
	// The person's state key and the registry are made once, by a first
	// run elsewhere, and each project has its .ralph/ already: the
	// faults land in the session's creation, not in a first run's setup.
	if r := ralph(t, t.TempDir(), env, nil, "warm up"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	outcomes := map[string]int{}
	for i, tr := range trials {
		first, again := fmt.Sprintf("first prompt %d", i), fmt.Sprintf("again %d", i)
		var dir string
		var run straceRun
		// strace counts a call's invocations per thread, and which of
		// ralph's threads makes a call is Go's scheduling: on a busy
		// machine the writes spread over more threads, and none may make
		// its nth. The trial is made again in a fresh project then; one
		// whose fault is never injected fails.
		for try := 1; ; try++ {
			dir = realTempDir(t)
			gitProject(t, dir)
			if err := os.Mkdir(filepath.Join(dir, ".ralph"), 0o755); err != nil {
				t.Fatal(err)
			}
			run = underStrace(t, dir, env, tr.opts(dir), first)
			if run.killed {
				break
			}
			if try == 5 {
				t.Fatalf("%s: the fault was not injected in %d tries (exit %d):\n%s\nstrace:\n%s", tr.name, try, run.code, run.stderr, run.log)
			}
		}
		c := ralph(t, dir, env, nil, "-c", again)
		var sent *llmtest.RecordedRequest
		for _, r := range srv.Requests() {
			if u := userContents(r); len(u) > 0 && strings.Contains(u[len(u)-1], again) {
				sent = &r
			}
		}
		switch {
		case c.code == 0 && sent != nil:
			// The first prompt leads the conversation (a prompt never
			// answered goes to the model with the next one, in one
			// message).
			u := userContents(*sent)
			if !strings.HasPrefix(u[0], first) {
				t.Errorf("%s: -c continued a session without its first prompt; it sent %q\nstderr: %s", tr.name, u, c.stderr)
			}
			outcomes["continued"]++
		case c.code == 2 && sent == nil:
			lines := strings.Split(strings.TrimSpace(c.stderr), "\n")
			if len(lines) != 1 || !regexp.MustCompile(`^ralph: this project has no (sessions yet|session to continue: the session for "`+first+`" was never recorded)`).MatchString(lines[0]) {
				t.Errorf("%s: -c found no session but did not say so in one sentence:\n%s", tr.name, c.stderr)
			}
			if strings.Contains(lines[0], "was never recorded") {
				outcomes["no session, its prompt shown"]++
			} else {
				outcomes["no session"]++
			}
		default:
			t.Errorf("%s: -c exit %d, request %v\nstdout: %s\nstderr: %s\nthe killed run's stderr: %s", tr.name, c.code, sent != nil, c.stdout, c.stderr, run.stderr)
		}
	}
	t.Logf("outcomes of %d crashes: %v", len(trials), outcomes)
}

// TestContinueWithACommandsName: `ralph -c stop` and `ralph -c continue`
// continue the latest session with that word as the prompt (cobra took it
// for the command and refused -c), and `ralph stop` is still the command.
func TestContinueWithACommandsName(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "first prompt"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, word := range []string{"stop", "continue"} {
		r := ralph(t, dir, env, nil, "-c", word)
		if r.code != 0 {
			t.Fatalf("ralph -c %s: exit %d\n%s", word, r.code, r.stderr)
		}
		reqs := srv.Requests()
		u := userContents(reqs[len(reqs)-1])
		if len(u) < 2 || u[0] != "first prompt" || !strings.HasSuffix(u[len(u)-1], "\n"+word) && u[len(u)-1] != word {
			t.Fatalf("ralph -c %s sent %q, want the first prompt, then %q", word, u, word)
		}
	}
	r := ralph(t, dir, env, nil, "stop")
	if r.code != 1 || !strings.Contains(r.stderr, "no ralph is running") {
		t.Fatalf("ralph stop is no longer the command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("the model was asked %d times, want 3", n)
	}
}

// TestIOErrorIsNotAFullDisk: an I/O error (EIO) injected into ralph's
// writes is said as one, "an I/O error on" the file, never as a full disk
// with the space left; and the failed rename of a new session says which
// cause it was (an I/O error, over quota, full), and that the same command
// again is what to do, since no session was recorded for it.
func TestIOErrorIsNotAFullDisk(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	full := regexp.MustCompile(`is full|free of|free some space|quota`)
	if r := ralph(t, t.TempDir(), env, nil, "warm up"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Each thread's Nth write fails, wherever that lands; a trial whose
	// faults hit none of the project's files, or the line ralph was
	// writing to stderr, has nothing to say.
	// strace counts each thread's writes apart, and how a run's writes
	// fall on its threads is the scheduler's: a late N can find no
	// thread that wrote N times. Such a trial tests nothing and is
	// passed over; most must inject.
	said, injected, trials := 0, 0, 8
	for n := 1; n <= trials; n++ {
		dir := realTempDir(t)
		gitProject(t, dir)
		run := underStrace(t, dir, env, []string{"-e", "trace=write", "-e", fmt.Sprintf("inject=write:error=EIO:when=%d", n)}, "first prompt")
		if !strings.Contains(run.log, "EIO (Input/output error) (INJECTED)") {
			t.Logf("write %d: no thread wrote %d times, so no EIO was injected", n, n)
			continue
		}
		injected++
		if strings.Contains(run.stderr, "fatal error: runtime") {
			// The fault hit the Go runtime's own write (its poller's
			// wake-up), which ends any Go program there.
			continue
		}
		if full.MatchString(run.stderr) {
			t.Errorf("write %d: an I/O error was called a full disk:\n%s", n, run.stderr)
		}
		hitProject := regexp.MustCompile(`write\(\d+<` + regexp.QuoteMeta(dir) + `/[^>]*>.*EIO .*\(INJECTED\)`).MatchString(run.log)
		// A run that a fault on its connection to the model ended first
		// says that, as the model's answer breaking off.
		if hitProject && run.stderr != "" && !strings.Contains(run.stderr, "the model's answer") {
			if !strings.Contains(run.stderr, "an I/O error on "+dir+"/") {
				t.Errorf("write %d: a write under the project failed, and ralph did not say it was an I/O error on it:\n%s", n, run.stderr)
			}
			said++
		}
		for _, l := range strings.Split(strings.TrimSpace(run.stderr), "\n") {
			// (An EIO on the connection to the model is the network's,
			// and said as the model's answer breaking off.)
			if strings.Contains(l, dir) && strings.Contains(l, "input/output error") || strings.Contains(l, ".tmp-") {
				t.Errorf("write %d: a chain of calls rather than a sentence: %s", n, l)
			}
		}
	}
	if injected < trials/2 {
		t.Fatalf("only %d of %d trials injected an EIO", injected, trials)
	}
	if said == 0 {
		t.Fatal("no trial's I/O error on the project's files was said")
	}
	t.Logf("%d of %d trials failed a write of the project's and said so", said, trials)

	for _, tt := range []struct {
		errno string
		want  string
		not   []string
	}{
		{"EIO", "an I/O error on ", []string{"is full", "free of", "free some space", "quota"}},
		{"EDQUOT", "you are over quota on the file system of ", []string{"is full", "free of", "I/O"}},
		{"ENOSPC", "is full (", []string{"quota", "I/O"}},
	} {
		dir := realTempDir(t)
		gitProject(t, dir)
		run := underStrace(t, dir, env, append([]string{"-e", "trace=renameat", "-e", "inject=renameat:error=" + tt.errno + ":when=1"}, sessionsPaths(dir)...), "first prompt")
		if !strings.Contains(run.log, "(INJECTED)") {
			t.Fatalf("%s: not injected:\n%s", tt.errno, run.log)
		}
		lines := strings.Split(strings.TrimSpace(run.stderr), "\n")
		if run.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) || !strings.Contains(lines[0], "run the same command again") || strings.Contains(lines[0], "ralph -c") {
			t.Errorf("%s at the session's rename: exit %d, want one line saying %q and to run the same command again:\n%s", tt.errno, run.code, tt.want, run.stderr)
		}
		for _, w := range tt.not {
			if strings.Contains(lines[0], w) {
				t.Errorf("%s at the session's rename says %q: %s", tt.errno, w, lines[0])
			}
		}
		if c := ralph(t, dir, env, nil, "-c", "again"); c.code != 2 || !strings.Contains(c.stderr, `"first prompt" was never recorded`) {
			t.Errorf("%s: -c after it: exit %d\n%s", tt.errno, c.code, c.stderr)
		}
	}
}
