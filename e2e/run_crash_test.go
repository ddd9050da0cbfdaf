package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// killMoments are when a crash test kills ralph after starting it: every
// 1.5 ms over the first 60 ms — start-up, the lock, the first save, the
// first task marked in progress, where a window a few ms wide once hid —
// then random moments up to 300 ms, where the tasks run.
func killMoments(rng *rand.Rand, random int) []time.Duration {
	var out []time.Duration
	for d := time.Duration(0); d <= 60*time.Millisecond; d += 1500 * time.Microsecond {
		out = append(out, d)
	}
	for range random {
		out = append(out, time.Duration(rng.Int64N(int64(300*time.Millisecond))))
	}
	return out
}

// crashTrial is one `ralph run` killed with SIGKILL after a delay, then
// `ralph resume` with no flags of the loop's own.
type crashTrial struct {
	t      *testing.T
	env    []string
	titles []string
	run    []string // `ralph run`'s arguments
}

func (c crashTrial) do(i int, after time.Duration) {
	t := c.t
	dir := t.TempDir()
	writeTasks(t, dir, c.titles...)
	before, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	cmd := exec.Command(ralphBin, c.run...)
	cmd.Dir, cmd.Env = dir, c.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(after)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	checkStateFilesParse(t, dir)
	r := ralph(t, dir, c.env, nil, "-y", "--json", "resume")
	where := fmt.Sprintf("trial %d (killed after %s)", i, after)
	file, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if r.code == 2 && strings.Contains(r.stderr, "no session") {
		// Only honest when nothing had started: not a byte of the task
		// file changed and no task did any work.
		if string(file) != string(before) {
			t.Fatalf("%s: resume says no session, but the task file changed:\n%s", where, file)
		}
		if _, err := os.Stat(filepath.Join(dir, "done.log")); err == nil {
			t.Fatalf("%s: resume says no session, but work was done", where)
		}
		return
	}
	if r.code != 0 {
		t.Fatalf("%s: resume exit %d\n%s\n%s\n%s", where, r.code, r.stdout, r.stderr, file)
	}
	if n := strings.Count(string(file), "- [x] "); n != len(c.titles) {
		t.Fatalf("%s: %d of %d tasks done:\n%s\n%s", where, n, len(c.titles), file, r.stderr)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "done.log"))
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	for _, title := range c.titles {
		if n := strings.Count(string(log), title+"\n"); n != 1 {
			t.Fatalf("%s: %q done %d times:\n%s", where, title, n, log)
		}
		if n := strings.Count(string(progress), "— "+title+"\n"); n != 1 {
			t.Fatalf("%s: %q has %d progress entries:\n%s", where, title, n, progress)
		}
	}
	if v, _ := os.ReadFile(filepath.Join(dir, "verified.log")); len(v) == 0 {
		t.Fatalf("%s: the --verify command never ran", where)
	}
}

// TestRunKilledAtAnyMomentThenResumed: `ralph run` killed at any moment
// of its life, then `ralph resume`: every task is done exactly once with
// its effect exactly once, or — only when nothing had started — resume
// says there is no session and nothing was touched. The resumed loop keeps
// the original --verify.
func TestRunKilledAtAnyMomentThenResumed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	rng := rand.New(rand.NewPCG(8, uint64(time.Now().UnixNano())))
	random := 100
	if testing.Short() {
		random = 10
	}
	// The trials are independent: four shards of them run in parallel,
	// each with its own home, so the test is not the suite's long pole.
	moments := killMoments(rng, random)
	const shards = 4
	for shard := range shards {
		t.Run(fmt.Sprintf("shard %d", shard), func(t *testing.T) {
			t.Parallel()
			c := crashTrial{t: t, env: cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), titles: numbered(3, nil),
				run: []string{"-y", "--json", "run", "--verify", "echo ok >> verified.log"}}
			for i := shard; i < len(moments); i += shards {
				c.do(i, moments[i])
			}
		})
	}
}

// TestRunExecAgentKilledThenResumed: a loop with --agent exec:… killed and
// resumed goes on with the same agent: the model never sees a request.
func TestRunExecAgentKilledThenResumed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "the model was asked"}
	})
	t.Cleanup(srv.Close)
	script := testdata("agents", "record.sh")
	rng := rand.New(rand.NewPCG(9, uint64(time.Now().UnixNano())))
	c := crashTrial{t: t, env: cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), titles: numbered(3, nil),
		run: []string{"--json", "run", "--agent", "exec:" + script, "--verify", "echo ok >> verified.log"}}
	moments := killMoments(rng, 10)
	if testing.Short() {
		moments = moments[:10]
	}
	for i, d := range moments {
		c.do(i, d)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the model got %d requests; an exec agent was chosen", n)
	}
}
