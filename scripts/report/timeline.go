package report

import (
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Timeline is what happened to each task of a session, and when, built
// from the session's own events alone: a report of an old session shows
// that session's tasks, whatever RALPH_TASKS.md says today.
type Timeline struct {
	Start time.Time      `json:"start,omitzero"`
	End   time.Time      `json:"end,omitzero"`
	Tasks []TaskTimeline `json:"tasks"`
	// Agents are the child agents and external agents the session ran,
	// in the order they started.
	Agents []AgentSpan `json:"agents"`
	// Commands are every run_command call and --verify run, in order.
	Commands []CommandRun `json:"commands"`
}

// TaskTimeline is one task's life in the session. DurationMS is the time
// its attempts ran; the waits between them (a retry's backoff, other
// tasks' turns) are left out, so it measures the work the task took.
type TaskTimeline struct {
	ID           string            `json:"id"`
	Title        string            `json:"title"`
	State        string            `json:"state"`
	Start        time.Time         `json:"start,omitzero"`
	End          time.Time         `json:"end,omitzero"`
	DurationMS   int64             `json:"duration_ms"`
	Attempts     []AttemptTimeline `json:"attempts"`
	InputTokens  int64             `json:"input_tokens"`
	OutputTokens int64             `json:"output_tokens"`
	CostUSD      *float64          `json:"cost_usd"` // null when a price is unknown
	Commands     int               `json:"commands"`
	FailedCmds   int               `json:"failed_commands"`
	Files        []git.FileChange  `json:"files"`
	Verify       []event.VerifyRun `json:"verify"`
}

// AttemptTimeline is one attempt at a task. Outcome is done, retry (it
// failed and the task went back to open), failed, stopped (a hard stop
// handed it back), or running when the record ends inside it.
type AttemptTimeline struct {
	Number       int              `json:"number"`
	Agent        string           `json:"agent,omitempty"`
	Start        time.Time        `json:"start"`
	End          time.Time        `json:"end,omitzero"`
	DurationMS   int64            `json:"duration_ms"`
	Outcome      string           `json:"outcome"`
	Error        string           `json:"error,omitempty"`
	Verify       *event.VerifyRun `json:"verify,omitempty"`
	InputTokens  int64            `json:"input_tokens"`
	OutputTokens int64            `json:"output_tokens"`
	CostUSD      *float64         `json:"cost_usd"`
	spent        bool             // usage came with the attempt's end
}

// AgentSpan is one agent's run: a child of the coordinator, a task's
// worker, or an external CLI agent.
type AgentSpan struct {
	ID           string    `json:"id"`
	Task         string    `json:"task,omitempty"`
	Attempt      int       `json:"attempt,omitempty"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end,omitzero"`
	Failed       bool      `json:"failed"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	CostUSD      *float64  `json:"cost_usd"`
	finished     bool
}

// CommandRun is one command an agent ran, or one run of --verify (Agent
// "verify"). Output keeps the end of a failed command's output.
type CommandRun struct {
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent,omitempty"`
	Task       string    `json:"task,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Command    string    `json:"command"`
	Failed     bool      `json:"failed"`
	DurationMS int64     `json:"duration_ms"`
	Output     string    `json:"output,omitempty"`
}

// Outcomes of an attempt.
const (
	OutcomeDone    = "done"
	OutcomeRetry   = "retry"
	OutcomeFailed  = "failed"
	OutcomeStopped = "stopped"
	OutcomeRunning = "running"
)

// VerifyAgent is the agent name of --verify runs among the commands.
const VerifyAgent = "verify"

// commandOutputLimit bounds the output a command run keeps.
const commandOutputLimit = 400

// taskPromptID finds the task a task loop's child works on in the prompt
// it was spawned with, for records written before agent_spawned named it.
var taskPromptID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Your task \((\S+) in RALPH_TASKS\.md\)`) })

// timelineBuilder goes through a session's events once.
type timelineBuilder struct {
	tl        Timeline
	tasks     map[string]*TaskTimeline
	order     []string
	open      map[string]*AttemptTimeline // the attempt in flight, by task
	agents    map[string]int              // index into tl.Agents of an agent's latest run
	calls     map[string]event.Event
	verify    string // the --verify command, for the command list
	sessionOn bool   // the session is still running
}

// BuildTimeline builds a session's task timeline from its events. st
// names the --verify command and says whether the session still runs; a
// zero State does without both.
func BuildTimeline(evs []event.Event, st memory.State) Timeline {
	b := &timelineBuilder{tasks: map[string]*TaskTimeline{}, open: map[string]*AttemptTimeline{},
		agents: map[string]int{}, calls: map[string]event.Event{}, sessionOn: st.Status == memory.StatusRunning || st.Status == memory.StatusPaused}
	b.verify = "--verify"
	if st.Run != nil && st.Run.Verify != "" {
		b.verify = st.Run.Verify
	}
	for _, e := range evs {
		if !e.Time.IsZero() {
			if b.tl.Start.IsZero() || e.Time.Before(b.tl.Start) {
				b.tl.Start = e.Time
			}
			if e.Time.After(b.tl.End) {
				b.tl.End = e.Time
			}
		}
		b.event(e)
	}
	return b.finish()
}

func (b *timelineBuilder) task(id string) *TaskTimeline {
	t := b.tasks[id]
	if t == nil {
		t = &TaskTimeline{ID: id, Attempts: []AttemptTimeline{}, Files: []git.FileChange{}, Verify: []event.VerifyRun{}}
		b.tasks[id] = t
		b.order = append(b.order, id)
	}
	return t
}

func (b *timelineBuilder) event(e event.Event) {
	switch e.Type {
	case event.TaskChanged:
		b.taskChanged(e)
	case event.AgentSpawned:
		b.spawned(e)
	case event.AgentFinished:
		if i, ok := b.agents[e.AgentID]; ok {
			a := &b.tl.Agents[i]
			a.End, a.Failed, a.finished = e.Time, e.IsError, true
			if e.Usage != nil {
				a.InputTokens, a.OutputTokens = int64(e.Usage.InputTokens), int64(e.Usage.OutputTokens)
			}
			a.CostUSD = e.CostUSD
		}
	case event.ToolCall:
		if e.ToolName == tools.ToolRunCommand && e.ToolID != "" {
			b.calls[e.ToolID] = e
		}
	case event.ToolResult:
		if e.ToolName == tools.ToolCompleteTask && !e.IsError {
			b.markedDone(e)
			return
		}
		c, ok := b.calls[e.ToolID]
		if !ok {
			return
		}
		delete(b.calls, e.ToolID)
		b.command(c, e)
	case event.FilesChanged:
		if e.Task != "" {
			t := b.task(e.Task)
			t.Files = mergeFiles(t.Files, e.Files)
		}
	}
}

// taskChanged follows a task through its states. The text names the task
// first and its new state last ("t3 in_progress", "t3: open -> done").
func (b *timelineBuilder) taskChanged(e event.Event) {
	words := strings.Fields(e.Text)
	if len(words) < 2 {
		return
	}
	id := cmp.Or(e.Task, strings.TrimRight(words[0], ":"))
	state := planfile.TaskState(strings.Trim(words[len(words)-1], ".,;"))
	switch state {
	case planfile.TaskOpen, planfile.TaskInProgress, planfile.TaskDone, planfile.TaskFailed, planfile.TaskSkipped:
	default:
		return
	}
	t := b.task(id)
	if e.Output != "" {
		t.Title = e.Output
	}
	t.State = string(state)
	if state == planfile.TaskInProgress {
		if prev := b.open[id]; prev != nil {
			// A start without an end: the record lost it (a crash).
			b.close(t, prev, e.Time, OutcomeStopped)
		}
		n := len(t.Attempts) + 1
		if e.TaskAttempt != nil && e.TaskAttempt.Number > 0 {
			n = e.TaskAttempt.Number
		}
		t.Attempts = append(t.Attempts, AttemptTimeline{Number: n, Start: e.Time})
		b.open[id] = &t.Attempts[len(t.Attempts)-1]
		return
	}
	a := b.open[id]
	if a == nil {
		return // a change outside an attempt: complete_task in chat
	}
	outcome := OutcomeStopped
	switch {
	case state == planfile.TaskDone:
		outcome = OutcomeDone
	case state == planfile.TaskFailed:
		outcome = OutcomeFailed
	case e.IsError:
		outcome = OutcomeRetry
	}
	if ta := e.TaskAttempt; ta != nil {
		a.Error = ta.Error
		if ta.Verify != nil {
			v := *ta.Verify
			a.Verify = &v
			t.Verify = append(t.Verify, v)
			b.tl.Commands = append(b.tl.Commands, CommandRun{Time: e.Time, Agent: VerifyAgent, Task: id, Attempt: a.Number,
				Command: b.verify, Failed: !v.OK, DurationMS: v.DurationMS, Output: failedOutput(!v.OK, v.Output)})
		}
	}
	if e.Usage != nil {
		a.InputTokens, a.OutputTokens, a.CostUSD, a.spent = int64(e.Usage.InputTokens), int64(e.Usage.OutputTokens), e.CostUSD, true
	}
	b.close(t, a, e.Time, outcome)
}

// markedDone follows complete_task outside the task loop (chat, a
// one-shot), where no task_changed event says the task is done: its
// answer names the task by id and title. In the loop the claim is only
// reported, and the loop's own task_changed decides.
func (b *timelineBuilder) markedDone(e event.Event) {
	id, title, ok := tools.MarkedDoneTask(e.Output)
	if !ok || b.open[id] != nil {
		return
	}
	t := b.task(id)
	t.State = string(planfile.TaskDone)
	if title != "" {
		t.Title = title
	}
	if len(t.Attempts) == 0 {
		t.Start, t.End = e.Time, e.Time
	}
}

func (b *timelineBuilder) close(t *TaskTimeline, a *AttemptTimeline, end time.Time, outcome string) {
	a.End, a.Outcome = end, outcome
	a.DurationMS = max(0, end.Sub(a.Start).Milliseconds())
	delete(b.open, t.ID)
}

func (b *timelineBuilder) spawned(e event.Event) {
	span := AgentSpan{ID: e.AgentID, Task: e.Task, Start: e.Time}
	if span.Task == "" {
		if m := taskPromptID().FindStringSubmatch(e.Text); m != nil {
			span.Task = m[1]
		}
	}
	if span.Task != "" {
		if a := b.open[span.Task]; a != nil {
			a.Agent = e.AgentID
			span.Attempt = a.Number
		}
		if e.TaskAttempt != nil {
			span.Attempt = e.TaskAttempt.Number
		}
	}
	b.agents[e.AgentID] = len(b.tl.Agents)
	b.tl.Agents = append(b.tl.Agents, span)
}

func (b *timelineBuilder) command(c, r event.Event) {
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(toolArgs(c), &args) != nil || strings.TrimSpace(args.Command) == "" {
		return
	}
	run := CommandRun{Time: c.Time, Agent: c.AgentID, Command: args.Command, Failed: r.IsError,
		DurationMS: max(0, r.Time.Sub(c.Time).Milliseconds()), Output: failedOutput(r.IsError, r.Output)}
	if i, ok := b.agents[c.AgentID]; ok {
		run.Task, run.Attempt = b.tl.Agents[i].Task, b.tl.Agents[i].Attempt
	}
	if run.Task != "" {
		t := b.task(run.Task)
		t.Commands++
		if run.Failed {
			t.FailedCmds++
		}
	}
	b.tl.Commands = append(b.tl.Commands, run)
}

// failedOutput is the end of a failed command's output, where the reason
// usually is; a command that succeeded keeps none.
func failedOutput(failed bool, out string) string {
	if !failed {
		return ""
	}
	return strings.TrimSpace(text.Tail(strings.TrimSpace(out), commandOutputLimit))
}

// finish closes what the record left open and sums each task up.
func (b *timelineBuilder) finish() Timeline {
	end := b.tl.End
	outcome := OutcomeStopped
	if b.sessionOn {
		outcome = OutcomeRunning
	}
	for _, id := range b.order {
		if a := b.open[id]; a != nil {
			b.close(b.tasks[id], a, end, outcome)
		}
	}
	for i := range b.tl.Agents {
		if a := &b.tl.Agents[i]; !a.finished {
			a.End = end
		}
	}
	byAgent := map[string]*AgentSpan{}
	for i := range b.tl.Agents {
		byAgent[b.tl.Agents[i].ID] = &b.tl.Agents[i]
	}
	b.tl.Tasks = []TaskTimeline{}
	for _, id := range b.order {
		t := b.tasks[id]
		var costs []*float64
		for i := range t.Attempts {
			a := &t.Attempts[i]
			if !a.spent {
				// Records older than the attempt's own usage: its agent's.
				if s := byAgent[a.Agent]; s != nil && s.finished {
					a.InputTokens, a.OutputTokens, a.CostUSD = s.InputTokens, s.OutputTokens, s.CostUSD
				}
			}
			t.DurationMS += a.DurationMS
			t.InputTokens += a.InputTokens
			t.OutputTokens += a.OutputTokens
			if a.InputTokens+a.OutputTokens > 0 {
				costs = append(costs, a.CostUSD)
			}
		}
		t.CostUSD = sumKnown(costs)
		if len(t.Attempts) > 0 {
			t.Start, t.End = t.Attempts[0].Start, t.Attempts[len(t.Attempts)-1].End
		}
		if t.Title == "" {
			t.Title = "(title not recorded)"
		}
		b.tl.Tasks = append(b.tl.Tasks, *t)
	}
	if b.tl.Agents == nil {
		b.tl.Agents = []AgentSpan{}
	}
	if b.tl.Commands == nil {
		b.tl.Commands = []CommandRun{}
	}
	slices.SortStableFunc(b.tl.Commands, func(x, y CommandRun) int { return x.Time.Compare(y.Time) })
	return b.tl
}

// sumKnown adds up costs; one unknown makes the sum unknown, since a
// partial sum would pass for the total. No costs at all is zero.
func sumKnown(costs []*float64) *float64 {
	var sum float64
	for _, c := range costs {
		if c == nil {
			return nil
		}
		sum += *c
	}
	sum = text.RoundUSD(sum)
	return &sum
}

// mergeFiles adds a change's files to those seen before, one entry per
// path with the lines summed.
func mergeFiles(have, more []git.FileChange) []git.FileChange {
	for _, f := range more {
		i := slices.IndexFunc(have, func(h git.FileChange) bool { return h.Path == f.Path })
		if i < 0 {
			have = append(have, f)
			continue
		}
		have[i].Added += f.Added
		have[i].Deleted += f.Deleted
		have[i].Binary = have[i].Binary || f.Binary
	}
	return have
}
