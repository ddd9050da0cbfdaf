package project

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers/approval"
)

// Answers say whether a question nobody at a terminal can answer waits
// for ralph answer, and for how long (the flags; see waiting).
type Answers struct {
	// NoWait never waits (--no-wait).
	NoWait bool
	// WaitFor is --wait-for-answers: a one-shot or script without a
	// terminal waits too, for at most this long (0: the answer timeout).
	// nil: it was not given.
	WaitFor *time.Duration
	// Timeout is --answer-timeout (nil: the config's answer_timeout).
	Timeout *time.Duration
}

// waiting is the one rule for every question ralph asks (command
// approvals, ask_before, MCP tools and servers, ask_user): whether it
// waits for an answer, how long, and, when it does not, why nobody is
// asked, which the refusal says.
//
//   - In CI nothing waits, whatever the mode and the flags: a job that
//     waits for a person hangs until the CI service kills it.
//   - A terminal at hand is asked, and ralph answer from another terminal
//     answers too, with no limit: the person is there.
//   - Without a terminal, ralph run (left working) waits for ralph answer
//     up to the answer timeout, then takes the question as refused and
//     goes on; a one-shot or a script does not wait unless
//     --wait-for-answers says so, since a cron job or a script step
//     must not hang.
type waiting struct {
	wait bool
	// limit is how long to wait for ralph answer (0: no limit).
	limit time.Duration
	// nobody is why nobody is asked, when wait is false; how is how the
	// person could have ralph wait for an answer instead, "" where
	// nothing would (CI): a refusal's hint names only what works where
	// it is read.
	nobody, how string
}

func (p *Project) waiting(terminal bool) waiting {
	return waitRule(p.Mode, p.answers, p.Config.AnswerTimeout, terminal, os.Getenv)
}

// waitRule is waiting's rule for a face of mode with the flags a and the
// config's answer_timeout, apart from the Project so that a run on
// another engine, which opens none, follows it too.
func waitRule(mode string, a Answers, answerTimeout time.Duration, terminal bool, getenv func(string) string) waiting {
	if name, ok := InCI(getenv); ok && mode != ModeChat {
		why := fmt.Sprintf("%s is set, and in CI ralph never waits for an answer", name)
		if a.WaitFor != nil {
			why += " (not even with --wait-for-answers)"
		}
		return waiting{nobody: why}
	}
	if terminal {
		return waiting{wait: true}
	}
	if a.NoWait {
		how := "with --wait-for-answers instead of --no-wait to wait for `ralph answer` from another terminal"
		if mode == ModeRun {
			how = "without --no-wait to wait for `ralph answer` from another terminal"
		}
		return waiting{nobody: "--no-wait was given", how: how}
	}
	limit := answerLimit(a, answerTimeout)
	switch {
	case a.WaitFor != nil:
		return waiting{wait: true, limit: limit}
	case mode == ModeRun:
		return waiting{wait: true, limit: limit}
	}
	return waiting{nobody: "there is no terminal to ask at", how: approval.WaitForAnswers}
}

// answerLimit is how long a question waits for ralph answer without a
// terminal: --wait-for-answers=DURATION, else --answer-timeout, else the
// config's answer_timeout.
func answerLimit(a Answers, answerTimeout time.Duration) time.Duration {
	limit := answerTimeout
	if a.Timeout != nil {
		limit = *a.Timeout
	}
	if a.WaitFor != nil && *a.WaitFor > 0 {
		limit = *a.WaitFor
	}
	return limit
}

// LoopAsks is the rule for the task loop's own questions (the circuit
// breaker, the budget) on every engine: they are asked when a person is
// at the terminal or said they will answer from another one
// (--wait-for-answers), never in CI and never with --no-wait without a
// terminal; a run left working without either stops at its limits
// instead, since nobody is known to be there. limit is how long a host
// that must bound its wait (a workflow on Temporal, ralph answer without
// a terminal) waits before the question's default, no.
func LoopAsks(a Answers, answerTimeout time.Duration, terminal bool, getenv func(string) string) (ask bool, limit time.Duration) {
	w := waitRule(ModeRun, a, answerTimeout, terminal, getenv)
	return w.wait && (terminal || a.WaitFor != nil), answerLimit(a, answerTimeout)
}

// LoopAsks is LoopAsks for this project's flags and configuration.
func (p *Project) LoopAsks(terminal bool) bool {
	ask, _ := LoopAsks(p.answers, p.Config.AnswerTimeout, terminal, os.Getenv)
	return ask
}

// hookNobody is why nobody is asked about a hook's approval where other
// questions wait ("" where it is asked): without a terminal, only a
// person who said they will answer from another terminal
// (--wait-for-answers) is waited for. A run left working without one
// waits for `ralph answer` about the model's commands, but a hook is
// asked about before the first task: waiting there would hold every task
// for the answer timeout on a hook that no one may ever see, such as the
// SessionStart hook bd init writes into .claude/settings.json.
func (p *Project) hookNobody(terminal bool) string {
	if terminal || p.answers.WaitFor != nil {
		return ""
	}
	return "there is no terminal to ask at, and without --wait-for-answers ralph does not wait on a hook's approval"
}

// waitNotice is what the person is told when they asked to wait and the
// rule says otherwise: in CI --wait-for-answers is ignored, and a run
// that would silently refuse what they meant to answer must say so.
func (p *Project) waitNotice() string {
	name, ci := InCI(os.Getenv)
	if !ci || p.Mode == ModeChat || p.answers.WaitFor == nil {
		return ""
	}
	return fmt.Sprintf("%s is set: --wait-for-answers is ignored, since in CI ralph never waits for an answer", name)
}

// CIVariables are the variables the big CI services set in every job.
// CI is set by nearly all of them; the others catch the ones that do not,
// or a job that unset it.
var CIVariables = []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "TRAVIS",
	"JENKINS_URL", "TEAMCITY_VERSION", "TF_BUILD", "BITBUCKET_BUILD_NUMBER", "DRONE", "APPVEYOR", "CODEBUILD_BUILD_ID"}

// InCI reports whether ralph runs in a CI job, and the variable that says
// so. A variable set to "", "0" or "false" does not count: that is how a
// person says "not CI" for a job run by hand.
func InCI(getenv func(string) string) (string, bool) {
	for _, name := range CIVariables {
		switch v := strings.ToLower(strings.TrimSpace(getenv(name))); v {
		case "", "0", "false", "no":
		default:
			return name + "=" + getenv(name), true
		}
	}
	return "", false
}
