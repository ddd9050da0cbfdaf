// Package scenarios is the table of task-loop cases that both hosts of the
// loop are tested against: the local loop (coordinator) and the Temporal
// workflow (ralph-temporal/engine). Each case is a task file, a policy and
// the scripted result of every attempt; both hosts must end with the same
// tasks done and failed, the same attempts, the same order and reason.
package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// Scenario is one case.
type Scenario struct {
	Name  string
	Tasks string // RALPH_TASKS.md
	// Policy: Backoff is kept tiny so retries do not slow the tests.
	Policy decide.Policy
	// Results scripts the attempts: per task id, the result of attempt 1,
	// 2, ...: "done", or "fail:<error>". An attempt not scripted is done.
	Results map[string][]string
	// Breaker, when set, is the condition the breaker trips on (nil:
	// never). Cases with a breaker run with nobody to ask, unless Ask.
	Breaker func(noProgress, sameErrorRepeats int) bool
	// Ask: someone could be asked whether to go on, but nobody answers,
	// so the question's default (no) decides. Hosts that cannot ask
	// skip the case.
	Ask bool
	// MaxWait bounds the wait for a limit ("limit" results reset
	// LimitReset after the attempt ends).
	MaxWait time.Duration

	// Decisions, when set, are the decision records the machine's hosts
	// must write, as "kind task" ("kind" when about no task), in order.
	Decisions []string
	// Reasons are how the reasons of some of those decisions must
	// begin, by "kind task" (the first such decision): the words a limit
	// or a failure is said in are the settlement's (machine.Settle), the
	// same on both hosts.
	Reasons map[string]string
	// Progress are the bodies of done tasks' progress entries, by task.
	Progress map[string]string

	// What both hosts must end with.
	Reason  string
	IsError bool
	Done    []string // in the order the tasks were done (Parallel 1)
	Failed  []string
	// Attempts is every task's number of attempts.
	Attempts map[string]int
	// Starts is the order attempts started, task ids (Parallel 1).
	Starts []string
}

// Result is the scripted result of attempt number attempt of task id:
// whether its agent claims it done, and else its error. Besides "done"
// and "fail:<error>", a result may be "verify:<output>", a claim that
// the verify command (VerifyCommand) refutes printing output, or
// "cost", done having spent Spent and CostUSD.
func (s Scenario) Result(id string, attempt int) (done bool, failure string) {
	r := s.result(id, attempt)
	if f, ok := strings.CutPrefix(r, "fail:"); ok {
		return false, f
	}
	return true, ""
}

func (s Scenario) result(id string, attempt int) string {
	rs := s.Results[id]
	if attempt-1 >= len(rs) {
		return "done"
	}
	return rs[attempt-1]
}

// Verified is how the verify command judges attempt number attempt of
// task id: whether it passes, and what it printed.
func (s Scenario) Verified(id string, attempt int) (ok bool, output string) {
	out, failed := strings.CutPrefix(s.result(id, attempt), "verify:")
	if !failed {
		return true, "ok"
	}
	return false, out
}

// Costly reports whether attempt number attempt of task id spent Spent
// and CostUSD.
func (s Scenario) Costly(id string, attempt int) bool { return s.result(id, attempt) == "cost" }

// Verifies reports whether the scenario runs VerifyCommand.
func (s Scenario) Verifies() bool {
	for _, rs := range s.Results {
		for _, r := range rs {
			if strings.HasPrefix(r, "verify:") {
				return true
			}
		}
	}
	return false
}

// WrongReasons says what is wrong with the reasons a host's decisions
// gave, by "kind task" (the first such decision's), against Reasons.
func (s Scenario) WrongReasons(got map[string]string) []string {
	var wrong []string
	for _, k := range slices.Sorted(maps.Keys(s.Reasons)) {
		if r, ok := got[k]; !ok || !strings.HasPrefix(r, s.Reasons[k]) {
			wrong = append(wrong, fmt.Sprintf("%s: reason %q, want it to begin %q", k, r, s.Reasons[k]))
		}
	}
	return wrong
}

// VerifyCommand is the verify command of a scenario that Verifies.
const VerifyCommand = "check"

// Spent and CostUSD are what a "cost" attempt spent.
var Spent = conversation.Usage{InputTokens: 1200, OutputTokens: 300}

const CostUSD = 0.25

// LimitAgent is the external agent whose usage limit a "limit" result
// is.
const LimitAgent = "fake"

// LimitReset is how long after an attempt a "limit" result resets.
const LimitReset = 200 * time.Millisecond

// LimitError is the error of an attempt a scripted limit cut short.
const LimitError = "usage limit reached"

// Limited reports whether attempt number attempt of task id is cut short
// by a limit that resets LimitReset later.
func (s Scenario) Limited(id string, attempt int) bool {
	rs := s.Results[id]
	return attempt-1 < len(rs) && rs[attempt-1] == "limit"
}

// fast is a backoff no case waits on; slow one long enough that the
// other ready task surely starts first, which fixes the order of starts
// on a busy machine.
const (
	fast = time.Millisecond
	slow = 300 * time.Millisecond
)

// All is the table.
var All = []Scenario{
	{
		Name: "ordering by priority then file order",
		Tasks: "# Tasks\n\n- [ ] third <!-- ralph:id=c priority=3 -->\n- [ ] first <!-- ralph:id=a priority=1 -->\n" +
			"- [ ] fourth <!-- ralph:id=d -->\n- [ ] second <!-- ralph:id=b priority=2 -->\n",
		Policy: decide.Policy{Backoff: fast},
		Reason: decide.ReasonAllDone, Done: []string{"a", "b", "c", "d"},
		Attempts: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1},
		Starts:   []string{"a", "b", "c", "d"},
	},
	{
		Name: "dependencies wait for the tasks they depend on",
		Tasks: "# Tasks\n\n- [ ] build on both <!-- ralph:id=top depends=base,lib -->\n- [ ] lib <!-- ralph:id=lib depends=base -->\n" +
			"- [ ] base <!-- ralph:id=base -->\n",
		Policy: decide.Policy{Backoff: fast},
		Reason: decide.ReasonAllDone, Done: []string{"base", "lib", "top"},
		Attempts: map[string]int{"base": 1, "lib": 1, "top": 1},
		Starts:   []string{"base", "lib", "top"},
	},
	{
		Name:    "a retry after a failure, then done",
		Tasks:   "# Tasks\n\n- [ ] flaky <!-- ralph:id=f -->\n- [ ] steady <!-- ralph:id=s -->\n",
		Policy:  decide.Policy{Retries: 2, Backoff: slow},
		Results: map[string][]string{"f": {"fail:tests fail", "done"}},
		Reason:  decide.ReasonAllDone, Done: []string{"s", "f"},
		Attempts: map[string]int{"f": 2, "s": 1},
		Starts:   []string{"f", "s", "f"},
	},
	{
		Name:    "retries spent: the task fails, the rest go on",
		Tasks:   "# Tasks\n\n- [ ] broken <!-- ralph:id=x -->\n- [ ] fine <!-- ralph:id=y -->\n",
		Policy:  decide.Policy{Retries: 1, Backoff: slow},
		Results: map[string][]string{"x": {"fail:boom", "fail:boom"}},
		Reason:  decide.ReasonSomeFailed, IsError: true, Done: []string{"y"}, Failed: []string{"x"},
		Attempts: map[string]int{"x": 2, "y": 1},
		Starts:   []string{"x", "y", "x"},
	},
	{
		Name:    "skip marks a failed task failed at once",
		Tasks:   "# Tasks\n\n- [ ] broken <!-- ralph:id=x -->\n- [ ] fine <!-- ralph:id=y -->\n",
		Policy:  decide.Policy{OnError: decide.OnErrorSkip, Retries: 3, Backoff: fast},
		Results: map[string][]string{"x": {"fail:boom"}},
		Reason:  decide.ReasonSomeFailed, IsError: true, Done: []string{"y"}, Failed: []string{"x"},
		Attempts: map[string]int{"x": 1, "y": 1},
		Starts:   []string{"x", "y"},
	},
	{
		Name:    "abort stops the loop at the first failure",
		Tasks:   "# Tasks\n\n- [ ] broken <!-- ralph:id=x -->\n- [ ] fine <!-- ralph:id=y -->\n",
		Policy:  decide.Policy{OnError: decide.OnErrorAbort, Backoff: fast},
		Results: map[string][]string{"x": {"fail:boom"}},
		Reason:  decide.ReasonAborted, IsError: true, Failed: []string{"x"},
		Attempts: map[string]int{"x": 1},
		Starts:   []string{"x"},
	},
	{
		Name:   "stuck on a dependency that is not a task",
		Tasks:  "# Tasks\n\n- [ ] fine <!-- ralph:id=y -->\n- [ ] waits <!-- ralph:id=w depends=nope -->\n",
		Policy: decide.Policy{Backoff: fast},
		Reason: decide.ReasonStuck, IsError: true, Done: []string{"y"},
		Attempts: map[string]int{"y": 1},
		Starts:   []string{"y"},
	},
	{
		Name:   "max iterations ends a loop with tasks open",
		Tasks:  "# Tasks\n\n- [ ] one <!-- ralph:id=a -->\n- [ ] two <!-- ralph:id=b -->\n- [ ] three <!-- ralph:id=c -->\n",
		Policy: decide.Policy{MaxIterations: 2, Backoff: fast},
		Reason: decide.ReasonMaxIterations, IsError: true, Done: []string{"a", "b"},
		Attempts: map[string]int{"a": 1, "b": 1},
		Starts:   []string{"a", "b"},
	},
	{
		// Two failures trip the breaker; its cooldown passes, the probe
		// (the failing task's retry) fails and it opens again for twice
		// as long; the next probe succeeds and closes it.
		Name:    "the breaker opens, goes half-open, reopens, closes",
		Tasks:   "# Tasks\n\n- [ ] shaky <!-- ralph:id=s -->\n- [ ] later <!-- ralph:id=l depends=s -->\n",
		Policy:  decide.Policy{Retries: 5, Backoff: 50 * time.Millisecond, BreakerCooldown: 20 * time.Millisecond},
		Results: map[string][]string{"s": {"fail:down", "fail:down", "fail:down", "done"}},
		Breaker: func(noProgress, _ int) bool { return noProgress >= 2 },
		Reason:  decide.ReasonAllDone, Done: []string{"s", "l"},
		Attempts: map[string]int{"s": 4, "l": 1},
		Starts:   []string{"s", "s", "s", "s", "l"},
		Decisions: []string{"task_picked s", "task_retry s", "task_picked s", "task_retry s", "breaker_open", "breaker_half_open",
			"task_picked s", "task_retry s", "breaker_open", "breaker_half_open", "task_picked s", "breaker_closed", "task_picked l"},
	},
	{
		// A limit cuts the first attempt short: the task goes back to
		// open without spending a retry or an iteration, nothing starts
		// before the reset, then it is done.
		Name:    "a usage limit is waited out",
		Tasks:   "# Tasks\n\n- [ ] limited <!-- ralph:id=u -->\n- [ ] after <!-- ralph:id=v depends=u -->\n",
		Policy:  decide.Policy{Backoff: fast},
		MaxWait: time.Minute,
		Results: map[string][]string{"u": {"limit", "done"}},
		Reason:  decide.ReasonAllDone, Done: []string{"u", "v"},
		Attempts:  map[string]int{"u": 2, "v": 1},
		Starts:    []string{"u", "u", "v"},
		Decisions: []string{"task_picked u", "limit_wait u", "limit_wait_over", "task_picked u", "task_picked v"},
		Reasons:   map[string]string{"limit_wait u": "attempt 1 was stopped by the fake usage limit: the fake agent hit its usage limit"},
	},
	{
		// The breaker trips with someone who could be asked, but nobody
		// answers: the default, no, stops the loop.
		Name:    "a question nobody answers stops the loop",
		Tasks:   "# Tasks\n\n- [ ] shaky <!-- ralph:id=s -->\n- [ ] other <!-- ralph:id=o depends=s -->\n",
		Policy:  decide.Policy{Retries: 5, Backoff: fast},
		Results: map[string][]string{"s": {"fail:down", "fail:down"}},
		Breaker: func(noProgress, _ int) bool { return noProgress >= 2 },
		Ask:     true,
		Reason:  decide.ReasonBreaker, IsError: true,
		Attempts:  map[string]int{"s": 2},
		Starts:    []string{"s", "s"},
		Decisions: []string{"task_picked s", "task_retry s", "task_picked s", "task_retry s", "breaker s", "breaker_stop"},
	},
	{
		// The last task fails for good with the breaker's condition
		// holding: nothing is left to start, so the loop ends without
		// opening the breaker or asking.
		Name:    "nothing left: a failure that would trip the breaker ends the loop",
		Tasks:   "# Tasks\n\n- [ ] broken <!-- ralph:id=x -->\n",
		Policy:  decide.Policy{OnError: decide.OnErrorSkip, Backoff: fast},
		Results: map[string][]string{"x": {"fail:boom"}},
		Breaker: func(noProgress, _ int) bool { return noProgress >= 1 },
		Reason:  decide.ReasonSomeFailed, IsError: true, Failed: []string{"x"},
		Attempts:  map[string]int{"x": 1},
		Starts:    []string{"x"},
		Decisions: []string{"task_picked x", "task_skip x"},
	},
	{
		// Verify refutes the first claim: the retry is told, and the
		// second attempt is done, its cost in its progress entry.
		Name:    "a verification failure is retried, then done with its cost",
		Tasks:   "# Tasks\n\n- [ ] checked <!-- ralph:id=k -->\n",
		Policy:  decide.Policy{Retries: 1, Backoff: fast},
		Results: map[string][]string{"k": {"verify:2 tests fail", "cost"}},
		Reason:  decide.ReasonAllDone, Done: []string{"k"},
		Attempts:  map[string]int{"k": 2},
		Starts:    []string{"k", "k"},
		Decisions: []string{"task_picked k", "task_retry k", "task_picked k"},
		Reasons: map[string]string{"task_retry k": "verification failed: 2 tests fail (`check` did not pass); " +
			"--on-error retry allows 1 retry and this is retry 1"},
		Progress: map[string]string{"k": "did k\n\nTokens for this task: 1200 in, 300 out, $0.25."},
	},
	{
		// A pass: one task, done at its first attempt.
		Name:   "a pass",
		Tasks:  "# Tasks\n\n- [ ] easy <!-- ralph:id=e -->\n",
		Policy: decide.Policy{Backoff: fast},
		Reason: decide.ReasonAllDone, Done: []string{"e"},
		Attempts:  map[string]int{"e": 1},
		Starts:    []string{"e"},
		Decisions: []string{"task_picked e"},
	},
}
