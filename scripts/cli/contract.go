package cli

import (
	"github.com/ralph-dev/ralph/coordinator/event"
)

//go:generate go run ../../cmd/eventsdoc -o ../../docs/events.md

// ContractLine is one kind of line of the JSON event contract: every line
// ralph prints as JSON in stream-json, ralph watch --json and the result
// object of json. cmd/eventsdoc writes docs/events.md from these and from
// the comments of the Go types' fields, and the end-to-end tests check
// ralph's output against the schema it writes there.
type ContractLine struct {
	// Type is the line's "type".
	Type string
	// About says what the line means, in a sentence or two.
	About string
	// Value is a value of the Go type the line is marshalled from.
	Value any
	// Fields are the JSON members this kind carries besides the ones
	// every event has (EventFields); nil means all of Value's.
	Fields []string
	// Sometimes are members Value always has that only some faces print
	// (a script step's number on the result line).
	Sometimes []string
}

// NotStreamed are the events that are no line of their own:
// session_started becomes the init line and result the result line, both
// written by the face; assistant_cut's text went out as text deltas.
var NotStreamed = []event.Type{event.SessionStarted, event.RunResult, event.AssistantCut}

// EventFields are the members of every event line, whatever its type.
var EventFields = []string{"type", "schema_version", "agent_id", "turn", "is_error"}

// ContractLines lists every kind of line of the contract: the init line,
// the events, a script's command line and the result, in the order a
// reader meets them.
func ContractLines() []ContractLine {
	ev := streamEvent{}
	line := func(t event.Type, about string, fields ...string) ContractLine {
		if fields == nil {
			fields = []string{}
		}
		return ContractLine{Type: string(t), About: about, Value: ev, Fields: fields}
	}
	return []ContractLine{
		{Type: "init", About: "The first line of every stream: the session the lines after it are about. " +
			"A watch prints one again for each later run of the session.", Value: InitLine{}},
		line(event.TurnStarted, "An agent begins a turn: it asks the model."),
		line(event.TextDelta, "A piece of the answer as the model streams it. "+
			"Sent lossily: a slow reader may miss some; the turn's assistant line has all of it.", "text"),
		line(event.ThinkingDelta, "A piece of a thinking model's reasoning, lossily like text_delta.", "text"),
		line(event.Thinking, "A thinking model's reasoning of a whole turn. It is never sent back to the model.", "text"),
		line(event.Assistant, "The model's text of a turn, whole.", "text"),
		line(event.ToolCall, "The model calls a tool.", "tool_call_id", "tool_name", "tool_input", "asking"),
		line(event.ToolResult, "What a tool call returned to the model; is_error is always there.",
			"tool_call_id", "tool_name", "output"),
		line(event.UserMessage, "A prompt an agent was given, one line per prompt: on the main agent the person's words "+
			"(a chat message, a one-shot's prompt, piped, continued with -c or --resume, or sent while the run works with ralph say or at the chat prompt); "+
			"with a child's agent_id its task, also the prompt of a task ralph run works.", "text"),
		line(event.MessageRefused, "The endpoint refused the request ending with a person's message (HTTP 400, 413 or 422, a content filter, "+
			"a context-length error): text is the endpoint's reason, output the message, which later requests leave out until /retry.", "text", "output"),
		line(event.ConversationCompacted, "The conversation was summarised in place and goes on in the same session from the summary (output) "+
			"and the last messages, kept as they were: the person's /compact, or ralph's own after the endpoint refused the conversation as longer "+
			"than its window, before it tries once more (once per message). text says it in a line; compaction has the counts.", "text", "output", "compaction"),
		line(event.Retry, "A request to the model failed and is tried again after wait_ms: text says why.",
			"text", "attempt", "wait_ms"),
		line(event.Fallback, "The model stayed overloaded or unavailable through the call's retries (or, with fallback_on_limit, rate limited), "+
			"and the same turn goes to the next fallback model (fallback_models, --fallback-model): fallback says from which model, to which, why, "+
			"and, the first time another provider's model answers, what does not carry over; text says it in words. "+
			"Any text of the failed model's answer is void. The next turn asks the session's model first again.", "text", "fallback"),
		line(event.Waiting, "The model endpoint has sent nothing for silent_ms; "+
			"one without silent_ms says data flows again.", "text", "silent_ms", "wait_limit_ms", "model_loaded"),
		line(event.AgentSpawned, "A child agent starts: text is its task. "+
			"tool_call_id is the spawn_agent call that started it; the task loop's workers name their task instead.",
			"text", "tool_call_id", "task", "task_attempt"),
		line(event.AgentFinished, "A child agent ended: text is its answer or its error.",
			"text", "tool_call_id", "task", "usage", "cost_usd"),
		line(event.TaskChanged, "The task loop began or ended an attempt at a task: text is the task and its new state, output its title.",
			"text", "output", "task", "task_attempt", "usage", "cost_usd"),
		line(event.Verified, "The task loop ran an attempt's verify commands, passed or failed: text is the commands (the one that did not pass, "+
			"when one failed), task_attempt.verify how they went; is_error says they failed.", "text", "task", "task_attempt"),
		line(event.FilesChanged, "A turn, a task attempt or a task's merge changed files: in a git work tree as its checkpoints record them; "+
			"outside git, the files a turn's write_file and edit_file changed.",
			"text", "files", "task"),
		line(event.StateSaved, "The session's state was saved.", "text"),
		line(event.Interrupted, "The run was interrupted: text says by what.", "text"),
		line(event.Error, "Something failed: text says what. The result line says how the run ended.", "text"),
		line(event.Warning, "Something went wrong without ending the run, said once.", "text"),
		line(event.Question, "The run waits for a person's answer, at its terminal or through ralph answer.", "question"),
		line(event.Answered, "The answer came: text is the answer, output where it came from.", "text", "output", "question"),
		line(event.LimitWait, "The task loop starts no task until until, waiting for a limit to reset; "+
			"one without until says the wait is over.", "text", "until", "state"),
		line(event.Breaker, "The circuit breaker changed state; an open one waits until until.", "text", "until", "state"),
		line(event.Decision, "A choice that shaped the run, and why (also in decisions.jsonl).", "text", "task", "decision"),
		line(event.TodoUpdated, "An agent set its todo list (update_plan, TodoWrite under Claude Code's name): todo is the whole list as it is now, "+
			"each step with its status (pending, in_progress, completed). It is the agent's working list for the session, not RALPH_TASKS.md; "+
			"the main agent's is kept in the session's record, and a resumed session has it back.", "todo"),
		line(event.WebSearch, "The provider's own web_search ran a search inside a turn (web_search, --web-search): search.query is what it searched for "+
			"(absent for OpenAI's search models, which name none), search.results how many results came back (the pages the answer cites, for OpenAI's), "+
			"search.error the provider's error code. The provider ran it, not ralph: no tool_call, no hook, no approval.", "search"),
		{Type: "plan", About: "The plan ralph plan wrote, in place of a result line: its tasks in the order ralph run takes them.", Value: planResult{}},
		{Type: "review", About: "What ralph review found and fixed, in place of a result line.", Value: ReviewJSON{}},
		{Type: "command", About: "A script's slash command step ran (stream-json of a script only); its result line follows.", Value: CommandLine{}},
		{Type: "result", About: "How the run ended: the last line of stream-json and the one object of json. " +
			"step, line and input are a script step's only; tasks and reason ralph run's only.", Value: StepResult{},
			Sometimes: []string{"step", "line", "input"}},
	}
}
