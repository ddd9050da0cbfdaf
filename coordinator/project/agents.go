package project

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The project's agents: the coordinator a face works through, the events
// it hands the face, and the configuration of its child agents.

// Coordinator builds the main coordinator for this project's session, with
// child agents enabled. Its events are recorded into the session, and emit,
// when not nil, is subscribed to them (see SetSink); the subscriptions end
// at Close.
func (p *Project) Coordinator(queue *interrupts.Queue, emit func(event.Event)) *coordinator.Coordinator {
	// The system prompt's own part is built while the first look at git
	// may still run, on the way to the first request: only the
	// repository's description (g.prompt) waits for it.
	system := p.SystemPrompt()
	g := p.openGitBeside(context.Background())
	opts := coordinator.Options{
		Model: p.Client, ModelName: p.Config.Model, Tools: p.MainTools(), Store: besideLoop{p.Session, &p.loopControl}, Queue: queue,
		SessionID: p.Session.ID, MaxTurns: p.Config.MaxTurns, System: system + g.Prompt(),
		History: p.History, ContextTokens: p.Config.ContextTokens, Prior: p.Prior(), RecordErr: p.RecordErr,
		Children: p.Children(), PriceOf: p.PriceOf, NextSession: p.nextSession, Hooks: p.Hooks,
		Redact: p.Redactor.Redact, WebSearchOff: webSearchOff(p.Config),
	}
	if p.Hooks.Has(hooks.InstructionsLoaded) {
		_, opts.Instructions = p.instructions.Files()
	}
	p.withDefinition(&opts)
	if !p.pinLazily(opts.Hooks) {
		g.PinNow()
	}
	if g.Checkpoints() != nil {
		opts.Checkpoints = g
	} else {
		// Without checkpoints git cannot tell which files changed: ralph's
		// own file tools say (files_changed, the session's facts). A
		// session created beside its first request still holds a turn's
		// tools until its record is durable (the tracker's placed gate).
		opts.FilesFromTools = true
		if p.placing {
			opts.Checkpoints = g
		}
	}
	if len(p.History) > 0 && g.Context() != "" {
		// A resumed conversation keeps its first system prompt; what the
		// repository looks like now reaches the model with the next prompt.
		opts.Note = "[ralph: the session resumed; the git repository now]\n" + g.Context()
	}
	if len(p.History) > 0 && p.History[0].Role == conversation.RoleSystem {
		// So do settings that changed (ralph -c --sandbox read-only).
		if note := p.changedNote(p.History[0].Content); note != "" {
			opts.Note = strings.TrimPrefix(opts.Note+"\n\n"+note, "\n\n")
		}
	}
	if prior := p.Prior(); len(p.History) > 0 && prior != nil && prior.Todo != nil && len(prior.Todo.Items) > 0 {
		// The model's todo list reaches it in the next turn, never in the
		// system prompt, which stays byte for byte what it was (caching).
		opts.Note = strings.TrimPrefix(opts.Note+"\n\n"+prior.Todo.ForModel(), "\n\n")
	}
	c := coordinator.New(opts)
	p.warnTo.Store(c)
	rec := coordinator.StartRecording(context.Background(), c.Events(), p.Session, eventwords.Transcript)
	p.unsubscribe = append(p.unsubscribe, rec.Stop)
	p.coord, p.recording = c, rec
	p.SetSink(emit, false)
	return c
}

// besideLoop is the session as the conversation's coordinator writes it.
// A conversation may run beside a task loop paused in the same session
// (chat or a script talking after /pause): while the loop is paused with
// nothing in flight, which the session says as "paused", the
// conversation's saves keep that status and the loop's iteration, so that
// status, watch and sessions never show a running or finished session
// whose loop waits for /run.
type besideLoop struct {
	*memory.Session
	loop *atomic.Pointer[loop.Control]
}

func (s besideLoop) keepPaused(fn func(*memory.State)) func(*memory.State) {
	ctl := s.loop.Load()
	if !ctl.Idle() {
		return fn
	}
	return func(st *memory.State) {
		status, ended, iteration := st.Status, st.EndedAt, st.Iteration
		fn(st)
		if status == memory.StatusPaused {
			st.Status, st.EndedAt, st.Iteration = status, ended, iteration
		}
	}
}

func (s besideLoop) SaveState(fn func(*memory.State)) error {
	return s.Session.SaveState(s.keepPaused(fn))
}

func (s besideLoop) SaveStateIfChanged(fn func(*memory.State)) (bool, error) {
	return s.Session.SaveStateIfChanged(s.keepPaused(fn))
}

// setTodo keeps the todo list an agent set (update_plan): the main
// agent's in the session's record (session.json, written atomically like
// every save), so a resumed session has it back, and every agent's on the
// event stream, which every face shows and events.jsonl keeps. A child's
// list is its own for as long as it works, so only its event has it.
func (p *Project) setTodo(ctx context.Context, l memory.TodoList) error {
	agent := tools.CallerOf(ctx).Agent
	if agent == "" || agent == event.MainAgent {
		agent = event.MainAgent
		if err := p.Session.SaveState(func(st *memory.State) { st.Todo = &l }); err != nil {
			err = fmt.Errorf("keeping the todo list in session.json: %w", err)
			p.todoErr.CompareAndSwap(nil, &err)
			return err
		}
	}
	if c := p.warnTo.Load(); c != nil {
		c.TodoUpdated(agent, l)
	}
	return nil
}

// decide records a decision made beside the coordinator's own (a
// person's answer, an agent's record_decision, what retention pruned):
// on the coordinator's event stream once there is one, so the session's
// recorder writes it with every other decision of the run; straight into
// the session before that.
func (p *Project) decide(d memory.DecisionRecord) error {
	if c := p.warnTo.Load(); c != nil {
		c.RecordDecision(d)
		return nil
	}
	return p.Session.AppendLog(memory.DecisionsLog, d)
}

// RecordErr is the first error writing the session's events or
// transcript, or keeping the todo list, if any: a run or task loop on this project checks it before
// it reports (coordinator.Options.RecordErr, loop.Options.RecordErr).
func (p *Project) RecordErr() error {
	if p.recording != nil {
		if err := p.recording.Err(); err != nil {
			return err
		}
	}
	if err := p.todoErr.Load(); err != nil {
		return *err
	}
	return nil
}

// SetSink hands the coordinator's events to another face (a task loop
// switched into chat): the old face is given what was published to it and
// unsubscribed before the new one is subscribed, so nothing is lost and
// the two never overlap. inStep calls emit in the publisher's goroutine
// (Face.InStep).
func (p *Project) SetSink(emit func(event.Event), inStep bool) {
	if p.face != nil {
		p.face()
		p.face = nil
	}
	if emit != nil && p.coord != nil {
		// A face shows the answer's text as it streams, so it takes every
		// piece, however slow its terminal (pubsub.Lossless).
		opt := pubsub.Lossless()
		if inStep {
			opt = pubsub.Sync()
		}
		p.face = p.coord.Events().Subscribe(context.Background(), emit, opt)
	}
}

// PriceOf is a model's price: the config's prices when set, else the
// model's list price if ralph knows it, else nil (cost unknown).
func (p *Project) PriceOf(model string) *llm.Price {
	if p.Config.InputPrice > 0 || p.Config.OutputPrice > 0 {
		return &llm.Price{Input: p.Config.InputPrice, Output: p.Config.OutputPrice}
	}
	if lp, ok := llm.ListPrice(model); ok {
		return &lp
	}
	return nil
}

// Children is the child-agent configuration: the project's tools as a
// child sees them (no complete_task: the coordinator keeps the task
// list), recorded under the session's agents/ directory.
func (p *Project) Children() *coordinator.Children {
	parallel := p.parallel
	if parallel <= 0 {
		parallel = 4
	}
	return &coordinator.Children{
		Parallel: parallel,
		MaxTurns: p.Config.MaxTurns,
		Timeout:  coordinator.DefaultChildTimeout,
		Tools:    p.Tools.For(tools.RoleChild),
		ToolsWith: func(role tools.Role, own ...tools.Tool) coordinator.Tools {
			return p.Tools.For(role, own...)
		},
		Defs: p.Definitions,
		AgentHooks: func(def agentdefs.Def, session *hooks.Set) *hooks.Set {
			return p.agentHooks.For(def, session)
		},
		Memory:   p.learnings,
		Settings: p.environment(),
		Skills:   p.skillsPrompt(),
		Store:    func(id string) coordinator.Store { return agentStore{s: p.Session, id: id} },
	}
}

// MainTools are the project's tools as the conversation's coordinator
// sees them, spawn_agent included (the coordinator runs it itself).
func (p *Project) MainTools() *tools.View {
	return p.Tools.For(tools.RoleMain, tools.Build(tools.Deps{Spawn: spawnedByCoordinator})...)
}

// spawnedByCoordinator is spawn_agent's body as the list builds it: the
// coordinator runs every spawn_agent call itself, so this runs only for an
// agent that may not start one.
func spawnedByCoordinator(context.Context, json.RawMessage) workers.Result {
	return workers.Result{IsError: true, Output: "spawn_agent is not available to this agent"}
}

// learnings is AGENT.md, the instructions files and where the person
// started, which every child is seeded with: a child asked to write
// "the file here" must know where here is, as its coordinator does.
func (p *Project) learnings() string {
	var s string
	// Through the session's door, as every file a prompt holds.
	if txt, err := p.Door.ReadHead(p.Fs, filepath.Join(p.Root, memory.AgentFile), 8<<10); err == nil {
		s = string(txt.Data)
	}
	// A child follows the project's instructions files as its
	// coordinator does: AGENTS.md speaks to every agent.
	return s + p.instructions.Text() + p.whereNote()
}

// agentStore records a child agent's conversation under the session's
// agents/ directory. Its events, and the transcript made of them, are
// recorded from the coordinator's event stream; only the coordinator saves
// state.
type agentStore struct {
	s  *memory.Session
	id string
}

func (a agentStore) AppendMessages(msgs ...conversation.Message) error {
	return a.s.AppendAgentMessages(a.id, msgs...)
}
func (a agentStore) AppendLog(name string, v any) error  { return a.s.AppendLog(name, v) }
func (a agentStore) SaveState(func(*memory.State)) error { return nil }
