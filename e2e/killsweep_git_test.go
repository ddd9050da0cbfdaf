//go:build linux

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 89's kill after each git step: ralph finds git once on PATH
// (childenv.Program), so a shim first on PATH, in a directory of the
// test's own outside the project, sees every git ralph runs. It numbers
// each call, runs the real git with the same arguments, input and
// environment, and when its number is the one the trial arms, SIGKILLs
// ralph right after that git is done: the step is on disk and ralph never
// learns it. A count of a clean run's calls comes first; then N = 1 up to
// it (gitStepSamples of them in make test, each N with
// RALPH_GIT_STEPS=all as `make kill-sweep` sets it), each a broken run
// followed by a normal run without the shim and checkGitAfterBreak.

// gitStepSamples is about how many kills after a git step make test
// makes of each mode: N evenly apart from a random first one, so that
// each make test tries other steps.
const gitStepSamples = 6

// gitShim is a git on PATH that counts ralph's calls of git and kills
// ralph after one of them.
type gitShim struct {
	dir string
}

// gitShimScript is the shim: %[1]s its directory, %[2]s the real git.
// ralph gives the git it runs an environment of its own making, so all
// the shim needs is in files beside it: count (the calls so far, taken
// under flock as two calls may start at once), calls (each call's number
// and arguments), killat (the call to kill after, 0 for none) and pid
// (ralph's, written by the test once ralph has started: a git that ends
// before it is there waits for it). Not $PPID: a hook's git runs in the
// sandbox, whose parent is not ralph. The shim notes the kill in killed
// before it kills: ralph's children may die with it.
const gitShimScript = `#!/bin/bash
d=%[1]q
exec 9>>"$d/lock"
flock 9
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$d/count"
printf '%%s %%s\n' "$n" "$*" >> "$d/calls"
flock -u 9
exec 9>&-
%[2]q "$@"
rc=$?
if [ "$n" = "$(cat "$d/killat" 2>/dev/null)" ]; then
	for _ in $(seq 500); do [ -s "$d/pid" ] && break; sleep 0.01; done
	echo "$n" > "$d/killed"
	kill -KILL "$(cat "$d/pid")"
fi
exit $rc
`

// newGitShim writes a shim for the real git found on the test's PATH.
func newGitShim(t *testing.T) *gitShim {
	t.Helper()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	needTool(t, "flock", "util-linux")
	s := &gitShim{dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(s.dir, "git"), []byte(fmt.Sprintf(gitShimScript, s.dir, realGit)), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// env is env with the shim first on PATH.
func (s *gitShim) env(env []string) []string {
	out := append([]string(nil), env...)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + s.dir + string(os.PathListSeparator) + v
			return out
		}
	}
	return append(out, "PATH="+s.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// arm starts a trial: the count from zero, and ralph killed after call n
// (none for 0).
func (s *gitShim) arm(t *testing.T, n int) {
	t.Helper()
	for _, f := range []string{"count", "calls", "pid", "killed"} {
		if err := os.Remove(filepath.Join(s.dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "killat"), []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// count is the number of git calls of the trial so far.
func (s *gitShim) count() int {
	n, _ := strconv.Atoi(strings.TrimSpace(readFileOr(filepath.Join(s.dir, "count"))))
	return n
}

// killed reports whether the shim killed ralph in this trial.
func (s *gitShim) killed() bool {
	_, err := os.Stat(filepath.Join(s.dir, "killed"))
	return err == nil
}

// call is git's subcommand and its first arguments in call n, for a
// failure's message ("commit -q -F -"): the -c settings ralph puts before
// every command are left out.
func (s *gitShim) call(n int) string {
	prefix := strconv.Itoa(n) + " "
	for _, l := range strings.Split(readFileOr(filepath.Join(s.dir, "calls")), "\n") {
		rest, ok := strings.CutPrefix(l, prefix)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		for len(f) >= 2 && (f[0] == "-c" || f[0] == "-C") {
			f = f[2:]
		}
		return strings.Join(f[:min(len(f), 4)], " ")
	}
	return "?"
}

// run runs `ralph run` of the mode in dir with the shim on PATH, telling
// the shim ralph's pid; it returns ralph's exit code (-1 when killed) and
// what it wrote to stderr.
func (s *gitShim) run(t *testing.T, dir string, env []string, m killMode) (int, string) {
	t.Helper()
	cmd := exec.Command(ralphBin, m.runArgs()...)
	cmd.Dir, cmd.Env = dir, s.env(env)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(ralphRunLimit, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
	pid := filepath.Join(s.dir, "pid")
	if err := os.WriteFile(pid+".new", []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pid+".new", pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !hung.Stop() {
		t.Fatalf("ralph run still ran after %s:\n%s", ralphRunLimit, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestKilledAfterEachGitStep(t *testing.T) {
	t.Parallel()
	all := os.Getenv("RALPH_GIT_STEPS") == "all"
	for _, m := range gitKillModes() {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			shim := newGitShim(t)
			tally := &workTally{}
			srv := llmtest.NewServerFunc(fileWorkModel(tally))
			t.Cleanup(srv.Close)
			env := cleanEnv(t, append([]string{"OPENAI_BASE_URL=" + srv.URL}, personGit...)...)

			// A clean run, counted.
			dir, start := sweepRepo(t)
			shim.arm(t, 0)
			if code, stderr := shim.run(t, dir, env, m); code != 0 {
				t.Fatalf("a clean run under the shim: exit %d\n%s", code, stderr)
			}
			calls := shim.count()
			if calls == 0 {
				t.Fatal("ralph ran no git through the shim, so the sweep tests nothing")
			}
			for title, n := range readGitState(t, dir, start).commits {
				if n != 1 {
					t.Fatalf("a clean run committed %q's work %d times:\n%s", title, n, gitLog(t, dir, start))
				}
			}

			stride, first := max(calls/gitStepSamples, 1), 1
			if all {
				stride = 1
			} else {
				first += rand.IntN(stride)
			}
			trials, killed := 0, 0
			began := time.Now()
			// Past the clean run's count: a run with a step redone makes
			// more calls, and parallel tasks vary in number.
			for n := first; n <= calls+calls/4; n += stride {
				trials++
				// Each N a test of its own: one failing N does not hide
				// the others.
				t.Run(fmt.Sprintf("call%03d", n), func(t *testing.T) {
					tally.reset()
					dir, start := sweepRepo(t)
					shim.arm(t, n)
					code, stderr := shim.run(t, dir, env, m)
					if !shim.killed() {
						if code != 0 {
							t.Fatalf("kill at git call %d: the run was not killed and failed: exit %d\n%s", n, code, stderr)
						}
						return // fewer calls this time
					}
					killed++
					what := fmt.Sprintf("kill at git call %d of %d (%s)", n, calls, shim.call(n))
					checkGitAfterBreak(t, m, dir, start, env, tally, what, code, stderr)
				})
			}
			promise := ": no task done twice, no entry lost, git as the person left it"
			if t.Failed() {
				promise = ""
			}
			t.Logf("a clean run makes %d git calls; %d trials (every %d from %d), %d killed after their git step, in %s%s",
				calls, trials, stride, first, killed, time.Since(began).Round(time.Second), promise)
		})
	}
}
