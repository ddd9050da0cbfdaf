package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end tests of waiting out limits and of the circuit breaker's
// half-open state (issue 12): a headless `ralph run` must neither spend
// retries nor fail tasks on a limit that resets later, must say until
// when it waits, and must still stop at once when told to.

// statusText runs `ralph status` on dir.
func statusText(t *testing.T, dir string) string {
	t.Helper()
	return ralph(t, dir, cleanEnv(t), nil, "status").stdout
}

// decisionKinds reads the kinds in the only session's decisions.jsonl.
func decisionKinds(t *testing.T, dir string) []string {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d struct{ Kind string }
		if json.Unmarshal([]byte(line), &d) == nil {
			kinds = append(kinds, d.Kind)
		}
	}
	return kinds
}

// waitingLine is ralph status's line about a wait: what it waits for and
// until when.
var waitingLine = regexp.MustCompile(`(?m)^waiting +waiting for (.+) until (\d\d:\d\d) \(in (\S+)\)$`)

// stoppedCleanly checks a run stopped by SIGINT during a wait: exit 130,
// its tasks open again, none failed, none left in progress.
func stoppedCleanly(t *testing.T, dir string, cmd interface{ Signal(os.Signal) error }, wait func() (int, time.Duration), tasks int) {
	t.Helper()
	stopAt := time.Now()
	if err := cmd.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, _ := wait()
	if code != 130 {
		t.Fatalf("exit %d after SIGINT during the wait, want 130", code)
	}
	if took := time.Since(stopAt); took > 5*time.Second {
		t.Errorf("SIGINT took %s to end the wait", took)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(data), "- [ ]") != tasks || strings.Contains(string(data), "[!]") || strings.Contains(string(data), "[~]") {
		t.Fatalf("tasks after the stop:\n%s", data)
	}
	if st := statusText(t, dir); !strings.Contains(st, "status    interrupted") || strings.Contains(st, "waiting") {
		t.Fatalf("status after the stop:\n%s", st)
	}
}

// TestRunWaitsOutLongRetryAfter: a 429 with Retry-After: 120 makes the loop
// wait (status, stderr and the event stream say until when) and fails no
// task; SIGINT during the wait exits 130 with the task open.
func TestRunWaitsOutLongRetryAfter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	child := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		if calls.Add(1) == 1 {
			return llmtest.Response{Status: 429, Headers: map[string]string{"Retry-After": "120"}}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	start := time.Now()
	cmd, _, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "--output-format", "stream-json", "run")
	var m []string
	waitFor(t, "ralph status to show the wait", 20*time.Second, func() bool {
		m = waitingLine.FindStringSubmatch(statusText(t, dir))
		return m != nil
	})
	if m[1] != "the rate limit" {
		t.Errorf("waiting for %q, want the rate limit", m[1])
	}
	want := start.Add(120 * time.Second)
	if m[2] != want.Format("15:04") && m[2] != want.Add(time.Minute).Format("15:04") {
		t.Errorf("status says until %s, want about %s", m[2], want.Format("15:04"))
	}
	if in, err := time.ParseDuration(m[3]); err != nil || in < 100*time.Second || in > 121*time.Second {
		t.Errorf("status says the wait ends in %s", m[3])
	}
	if !strings.Contains(errb.String(), "ralph: waiting for the rate limit until "+m[2]) {
		t.Errorf("stderr does not say it waits: %q", errb.String())
	}
	events, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "events.jsonl"))
	if !regexp.MustCompile(`"type":"limit_wait".*"text":"waiting for the rate limit until ` + m[2] + `".*"until":"`).Match(events) {
		t.Errorf("no limit_wait event with its end:\n%s", events)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the model was called %d times during the wait, want once", n)
	}
	stoppedCleanly(t, dir, cmd.Process, func() (int, time.Duration) { return exitCode(t, cmd, 10*time.Second) }, 2)
	if kinds := strings.Join(decisionKinds(t, dir), " "); !strings.Contains(kinds, "limit_wait") || strings.Contains(kinds, "task_skip") || strings.Contains(kinds, "breaker") {
		t.Errorf("decisions: %s", kinds)
	}
}

// TestRunWaitsShortLimitThenGoesOn: with max_retry_after at 1s, OpenAI's
// 429 saying the requests reset in 2s is waited out by the loop for real,
// and then every task is done.
func TestRunWaitsShortLimitThenGoesOn(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	child := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		if calls.Add(1) == 1 {
			return llmtest.Response{RateLimit: &llmtest.RateLimit{Shape: "openai", ResetS: 2}}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	env := cleanEnv(t)
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "max_retry_after = \"1s\"\n")
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run")
	m := resultLine(t, r.stdout)
	tasks := m["tasks"].(map[string]any)
	if r.code != 0 || tasks["done"] != 2.0 || tasks["failed"] != 0.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	reqs := srv.Requests()
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < 1900*time.Millisecond {
		t.Errorf("the next request came %s after the 429, before its reset", gap)
	}
	if !strings.Contains(r.stderr, "ralph: waiting for the rate limit until ") || !strings.Contains(r.stderr, "ralph: the wait for the rate limit is over; going on") {
		t.Errorf("stderr: %q", r.stderr)
	}
	kinds := strings.Join(decisionKinds(t, dir), " ")
	if !strings.Contains(kinds, "limit_wait limit_wait_over") || strings.Contains(kinds, "task_retry") || strings.Contains(kinds, "task_skip") {
		t.Errorf("decisions: %s", kinds)
	}
	file, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(file), "- [x]") != 2 {
		t.Errorf("RALPH_TASKS.md:\n%s", file)
	}
}

// usageLimitAgent writes an exec agent that prints claude's usage-limit
// message (reset two minutes ahead, also written to resetFile) and exits 1.
func usageLimitAgent(t *testing.T) (script, resetFile string) {
	t.Helper()
	bin := t.TempDir()
	script, resetFile = filepath.Join(bin, "agent.sh"), filepath.Join(bin, "reset")
	mustWrite(t, script, "#!/bin/sh\ncat >/dev/null\nreset=$(( $(date +%s) + 120 ))\necho $reset > "+resetFile+
		"\necho 'working on it'\necho \"Claude AI usage limit reached|$reset\"\nexit 1\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script, resetFile
}

// TestRunWaitsForAnAgentsUsageLimit: an exec agent printing a usage-limit
// message makes the loop wait until the reset it named; SIGINT ends the
// wait with exit 130 and no task failed. With --max-wait below the reset
// the attempt fails instead, saying why.
func TestRunWaitsForAnAgentsUsageLimit(t *testing.T) {
	t.Parallel()
	script, resetFile := usageLimitAgent(t)
	dir := t.TempDir()
	writeTasks(t, dir, "one")
	cmd, _, errb := startRalph(t, dir, cleanEnv(t), "--json", "run", "--agent", "exec:"+script)
	var m []string
	waitFor(t, "ralph status to show the wait", 20*time.Second, func() bool {
		m = waitingLine.FindStringSubmatch(statusText(t, dir))
		return m != nil
	})
	data, _ := os.ReadFile(resetFile)
	secs, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if want := time.Unix(secs, 0).Format("15:04"); m[1] != "the exec usage limit" || m[2] != want {
		t.Errorf("status says waiting for %q until %s, want the exec usage limit until %s", m[1], m[2], want)
	}
	if !strings.Contains(errb.String(), "ralph: waiting for the exec usage limit until "+m[2]) {
		t.Errorf("stderr: %q", errb.String())
	}
	stoppedCleanly(t, dir, cmd.Process, func() (int, time.Duration) { return exitCode(t, cmd, 10*time.Second) }, 1)

	dir = t.TempDir()
	writeTasks(t, dir, "one")
	r := ralph(t, dir, cleanEnv(t), nil, "--json", "run", "--agent", "exec:"+script, "--max-wait", "1m", "--on-error", "skip")
	if r.code != 1 || !strings.Contains(r.stdout, `"failed":1`) {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	decisions, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
	if !regexp.MustCompile(`the exec usage limit resets at \d\d:\d\d, in (1m5\ds|2m0s), later than --max-wait \(1m0s\) lets ralph wait`).Match(decisions) {
		t.Errorf("the failure does not say the limit is beyond --max-wait:\n%s", decisions)
	}
}

// TestRunBreakerHalfOpens: headless, three failures in a row open the
// breaker; after its cooldown one task goes through, succeeds and closes
// it; every transition is in decisions.jsonl and the run ends well.
func TestRunBreakerHalfOpens(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	script, count := filepath.Join(bin, "agent.sh"), filepath.Join(bin, "count")
	mustWrite(t, script, "#!/bin/sh\ncat >/dev/null\nn=$(( $(cat "+count+" 2>/dev/null || echo 0) + 1 ))\necho $n > "+count+
		"\nif [ $n -le 3 ]; then echo 'it broke'; exit 1; fi\necho '<promise>COMPLETE</promise>'\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTasks(t, dir, "a", "b", "c", "d")
	notes := filepath.Join(bin, "notes.jsonl")
	env := notifyEnv(t, notes)
	r := ralph(t, dir, env, nil, "--json", "run", "--agent", "exec:"+script, "--breaker-cooldown", "300ms", "--retries", "5")
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["tasks"].(map[string]any)["done"] != 4.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	var breaker []string
	for _, k := range decisionKinds(t, dir) {
		if strings.HasPrefix(k, "breaker") {
			breaker = append(breaker, k)
		}
	}
	if strings.Join(breaker, " ") != "breaker_open breaker_half_open breaker_closed" {
		t.Fatalf("breaker decisions = %v", breaker)
	}
	if !strings.Contains(r.stderr, "ralph: circuit breaker closed → open: 3 attempts in a row completed no task") ||
		!strings.Contains(r.stderr, "ralph: circuit breaker half-open → closed") {
		t.Errorf("stderr: %q", r.stderr)
	}
	// notify_command heard of the trip and of the end.
	evs := readNotes(t, notes)
	if len(evs) != 2 || evs[0]["event"] != "breaker_open" || evs[1]["event"] != "run_ended" ||
		!strings.Contains(evs[0]["text"].(string), "closed → open") {
		t.Errorf("notifications = %v", evs)
	}
}

// notifyEnv is a clean environment whose user config runs a
// notify_command that appends each event's JSON, one a line, to notes.
func notifyEnv(t *testing.T, notes string) []string {
	t.Helper()
	env := cleanEnv(t, "NOTIFY_OUT="+notes, "OPENAI_API_KEY=sk-notify-secret-0123456789")
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"),
		`notify_command = '{ cat; echo; } >> "$NOTIFY_OUT"; ! env | grep -q sk-notify-secret'`+"\n")
	return env
}

func readNotes(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("notify_command never ran: %v", err)
	}
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("notify_command read %q, not JSON: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestNotifyCommandGetsTheRunsEnd: the end of `ralph run` reaches
// notify_command as JSON on its stdin, with the project, the session, the
// reason, the exit code and the task counts, and without the API key in
// its environment.
func TestNotifyCommandGetsTheRunsEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "first", "second")
	script := testdata("agents", "complete.sh")
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	r := ralph(t, dir, notifyEnv(t, notes), nil, "--json", "run", "--agent", "exec:"+script)
	m := resultLine(t, r.stdout)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := readNotes(t, notes)
	if len(evs) != 1 {
		t.Fatalf("notifications = %v", evs)
	}
	ev := evs[0]
	tasks, _ := ev["tasks"].(map[string]any)
	if ev["event"] != "run_ended" || ev["project"] != dir || ev["session_id"] != m["session_id"] || ev["reason"] != "all tasks done" ||
		ev["exit_code"] != 0.0 || ev["is_error"] != false || tasks["done"] != 2.0 || !strings.HasPrefix(ev["text"].(string), "all tasks done: 2 done") {
		t.Errorf("notification = %v", ev)
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("stderr: %q", r.stderr)
	}
}
