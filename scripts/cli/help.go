package cli

import (
	"sync"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/agents"
)

// ScriptHelp is `ralph script --help`'s text.
const ScriptHelp = `Run a script of chat lines: one message or slash command per line, # comments
and blank lines skipped, a trailing backslash continues a line. ralph stops at
the first failed step (exit code non-zero) unless --keep-going. FILE - reads
standard input.

Output (--output-format):
  text         each answer and command output on stdout, errors on stderr
  json         one result object per step, one per line: the one-shot result
               object plus "step", "line" and "input"
  stream-json  one init line, every event of every step, and after each step
               its result object as in json

Exit codes: 0 every step succeeded; otherwise the code of the first failed
step: 1 it failed, 2 usage or configuration error; 3 another ralph holds the
project; 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP.`

// RunHelp is `ralph run --help`'s text. The external agents' paragraph
// comes from their table, which alone names them.
// It is put together when the command line is built, not when the
// package is initialised: ralph --version, which prints before building
// it, does not wrap the agents' paragraph (docs/development.md, "Start-up
// budget").
var RunHelp = sync.OnceValue(func() string {
	return `Work through the open tasks of RALPH_TASKS.md: pick the next ready task (priority,
then file order, dependencies done), mark it in progress, let a child agent (or an
external CLI agent, --agent) work it, and mark it done when the agent completes it
and its verify commands pass: --verify, then the task's own ("verify: CMD" in its
notes, as ralph plan writes it). Progress is saved at every task boundary; after a crash,
` + "`ralph resume`" + ` picks the loop up.

Conditions (--until, --breaker) are expressions over: iterations, tasks_open,
tasks_done, tasks_failed, errors, error_rate, tokens, cost_usd, elapsed_s,
no_progress, same_error_repeats. They are checked before any model call.

` + terminal.Wrap(agents.Help(), 82) + `

In git: every attempt is checkpointed (ralph diff --task ID, ralph undo --task ID);
--commit makes one commit per done task with only its files, leaving your staged
and uncommitted work as it is; --worktrees works each task in .ralph/worktrees/ID
on a branch ralph/ID and merges it back (a conflict marks the task [!] and keeps
the branch).

Limits: an attempt stopped by a rate limit or an agent's usage limit that resets later
(the agents' own messages are read) is not a failure; the loop starts no
task until the reset (ralph status says until when), at most --max-wait (config
max_wait, default 6h). Without a terminal the tripped circuit breaker opens for
--breaker-cooldown (default 5m), then lets one task through: success closes it,
failure opens it again for twice as long.

Many machines: --engine temporal --address HOST:PORT runs the loop as a Temporal
workflow, each attempt on one of the ralph-temporal workers, in a worktree of a
clone of the project's remote (origin) on a branch ralph/ID, merged into the
current branch there; ralph stop, say, pause, continue, status and watch reach it.

Prompts: each attempt's agent is told its task, its notes, the goals and the latest
progress; a retry is also told why the last attempt failed (the error, the end of
the --verify output, the agent's last words). --prompt-template FILE (config
prompt_template) writes that prompt with a Go text/template of your own instead;
its fields are in docs/run.md. A template that does not parse or names an unknown
field stops the run (exit 2) before any task is touched.

Every choice the loop makes (the task picked, a retry, a skip, a breaker change, a
person's answer) goes to the session's decisions.jsonl with its reason, as do the
agents' own (record_decision); ralph report and ralph analyze show them.

Exit codes: 0 every task done (or --until met) and none failed; 1 a task failed or
the loop stopped early; 2 usage; 3 locked; 130/143 interrupted.`
})
