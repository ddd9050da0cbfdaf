// Package project opens a project for one ralph process: it resolves the
// configuration, takes the project lock, recovers from a crashed run,
// creates or reopens the session record and builds the model client and
// tools. Every face (one-shot, chat, the task loop) starts here, so the
// rules about locks and recovery live in one place.
package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
)

// Overrides are the command-line settings that beat every config source.
type Overrides struct {
	Model          string
	BaseURL        string
	MaxTurns       int
	MaxRetries     int // -1: not set
	CommandTimeout time.Duration
	// Parallel bounds concurrent child agents (0: default 4).
	Parallel int
}

// Options says how to open the project.
type Options struct {
	Root      string
	Fs        afero.Fs // nil: the OS filesystem
	Getenv    func(string) string
	Overrides Overrides
	Mode      string // oneshot, chat, run
	// Resume continues a session instead of starting one: SessionID names
	// it (a full id, a unique prefix or suffix), or "" for the latest.
	Resume    bool
	SessionID string
	Force     bool
	Approver  workers.Approver
	// ModelOptional: the work is done by an external agent, so a missing
	// API key is not an error.
	ModelOptional bool
	// Notify receives one-line notices for the user (crash recovered, ...).
	Notify func(string)
}

// Project is an opened project. Close it on every exit path.
type Project struct {
	Root    string
	Fs      afero.Fs
	Config  config.Config
	Lock    *memory.Lock
	Session *memory.Session
	Client  *llm.Client
	Tools   *workers.Toolset
	// History is the saved conversation of a resumed session, repaired so
	// every tool call has a result.
	History []conversation.Message
	Resumed bool
	// Status is the status of a resumed session before this process.
	PriorStatus string
	registry    *memory.Registry
	parallel    int
	// unsubscribe ends the recorders and faces subscribed by Coordinator.
	unsubscribe []func() error
}

// Open resolves configuration, locks the project and prepares the session.
// Errors: config.ErrInvalid (exit 2), memory.ErrLocked (exit 3),
// memory.ErrNoSession for a resume with nothing to resume (exit 2).
func Open(ctx context.Context, opts Options) (*Project, error) {
	if opts.Fs == nil {
		opts.Fs = afero.NewOsFs()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Notify == nil {
		opts.Notify = func(string) {}
	}
	cfg, err := config.Load(config.Sources{Fs: opts.Fs, ProjectRoot: opts.Root, UserConfigDir: config.UserConfigDir(), Getenv: opts.Getenv})
	if err != nil {
		return nil, err
	}
	applyOverrides(&cfg, opts.Overrides)
	if err := cfg.Validate(); err != nil && !(opts.ModelOptional && errors.Is(err, config.ErrNoKey)) {
		return nil, err
	}
	p := &Project{Root: opts.Root, Fs: opts.Fs, Config: cfg, parallel: opts.Overrides.Parallel,
		registry: memory.OpenRegistry(opts.Fs, memory.RegistryDir(opts.Getenv))}
	lock, err := memory.AcquireLock(opts.Fs, opts.Root, "", opts.Force)
	if err != nil {
		return nil, err
	}
	p.Lock = lock
	ok := false
	defer func() {
		if !ok {
			_ = lock.Release()
		}
	}()
	if err := p.recover(opts.Notify); err != nil {
		return nil, err
	}
	if opts.Resume {
		err = p.resume(opts)
	} else {
		err = p.start(opts)
	}
	if err != nil {
		return nil, err
	}
	_ = lock.SetSession(p.Session.ID)
	if cfg.UntrustedCommands > 0 {
		opts.Notify(fmt.Sprintf("ignoring %d allowed_commands in %s that were not approved on this machine; approve them again with \"always\" in chat",
			cfg.UntrustedCommands, config.ProjectFile))
	}
	var appr workers.Approver = opts.Approver
	if appr == nil {
		appr = workers.DenyNoTerminal
	}
	if len(cfg.AllowedCommands) > 0 {
		appr = allowedFirst{allowed: cfg.AllowedCommands, next: appr}
	}
	p.Tools, err = workers.NewToolset(workers.Options{
		Root: opts.Root, Approver: appr, CommandTimeout: cfg.CommandTimeout, Env: commandEnv(cfg.APIKeyEnv),
	})
	if err != nil {
		return nil, err
	}
	p.Tools.Register(workers.NewRememberTool(opts.Fs, opts.Root))
	p.Tools.Register(workers.NewCompleteTaskTool(opts.Fs, opts.Root))
	p.Client = llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, MaxAttempts: cfg.MaxRetries + 1})
	p.touchRegistry()
	ok = true
	return p, nil
}

func applyOverrides(cfg *config.Config, o Overrides) {
	if o.Model != "" {
		cfg.Model = o.Model
	}
	if o.BaseURL != "" {
		cfg.SetBaseURL(o.BaseURL)
	}
	if o.MaxTurns != 0 {
		cfg.MaxTurns = o.MaxTurns
	}
	if o.MaxRetries >= 0 {
		cfg.MaxRetries = o.MaxRetries
	}
	if o.CommandTimeout != 0 {
		cfg.CommandTimeout = o.CommandTimeout
	}
}

// start creates a new session.
func (p *Project) start(opts Options) error {
	id := memory.NewID(time.Now())
	s, err := memory.CreateSession(p.Fs, p.Root, id, memory.State{
		Status: memory.StatusRunning, Mode: opts.Mode, Model: p.Config.Model, StartedAt: time.Now().UTC(),
	}, p.Config.APIKey)
	if err != nil {
		return fmt.Errorf("cannot record the session under %s: %w", p.Root, err)
	}
	p.Session = s
	return nil
}

// resume reopens a session and repairs its history for the model.
func (p *Project) resume(opts Options) error {
	id, err := memory.FindSession(p.Fs, p.Root, opts.SessionID)
	if err != nil {
		return err
	}
	s, msgs, err := memory.OpenSession(p.Fs, p.Root, id, p.Config.APIKey)
	if err != nil {
		return err
	}
	p.PriorStatus = s.State().Status
	started, err := startedCalls(p.Fs, p.Root, id)
	if err != nil {
		return err
	}
	repaired, synthetic := memory.RepairHistory(msgs, started)
	if err := s.AppendMessages(synthetic...); err != nil {
		return err
	}
	p.History, p.Session, p.Resumed = repaired, s, true
	return s.SaveState(func(st *memory.State) {
		st.Status = memory.StatusRunning
		st.Mode = opts.Mode
		st.Model = p.Config.Model
		st.EndedAt = time.Time{}
		st.Error = ""
	})
}

// startedCalls lists the tool calls a session began executing, from its
// events: a call with a tool_call event but no result may have had effects.
func startedCalls(fs afero.Fs, root, id string) (map[string]bool, error) {
	evs, _, err := memory.ReadJSONL[coordinator.Event](fs, memory.LogPath(root, id, memory.EventsLog))
	if err != nil {
		return nil, err
	}
	started := map[string]bool{}
	for _, ev := range evs {
		if ev.Type == coordinator.EventToolCall && ev.ToolID != "" {
			started[ev.ToolID] = true
		}
	}
	return started, nil
}

// Coordinator builds the main coordinator for this project's session, with
// child agents enabled. Its events are recorded into the session, and emit,
// when not nil, is subscribed to them; both subscriptions end at Close.
func (p *Project) Coordinator(queue *interrupts.Queue, emit func(coordinator.Event)) *coordinator.Coordinator {
	c := coordinator.New(coordinator.Options{
		Model: p.Client, ModelName: p.Config.Model, Tools: p.Tools, Store: p.Session, Queue: queue,
		SessionID: p.Session.ID, MaxTurns: p.Config.MaxTurns, System: p.SystemPrompt(),
		History: p.History, ContextTokens: p.Config.ContextTokens, Prior: p.Prior(),
		Children: p.Children(nil), PriceOf: p.PriceOf,
	})
	p.unsubscribe = append(p.unsubscribe, coordinator.Record(context.Background(), c.Events(), p.Session))
	if emit != nil {
		cancel := c.Events().Subscribe(context.Background(), emit)
		p.unsubscribe = append(p.unsubscribe, func() error { cancel(); return nil })
	}
	return c
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

// Children is the child-agent configuration: the project's tools without
// complete_task (the coordinator keeps the task list), plus any extra
// tools, recorded under the session's agents/ directory.
func (p *Project) Children(extra []workers.Tool) *coordinator.Children {
	parallel := p.parallel
	if parallel <= 0 {
		parallel = 4
	}
	return &coordinator.Children{
		Parallel: parallel,
		MaxTurns: p.Config.MaxTurns,
		Timeout:  30 * time.Minute,
		Tools:    p.Tools.View([]string{"complete_task"}, extra...),
		ToolsWith: func(more ...workers.Tool) coordinator.Tools {
			return p.Tools.View([]string{"complete_task"}, append(append([]workers.Tool(nil), extra...), more...)...)
		},
		Memory: p.learnings,
		Store:  func(id string) coordinator.Store { return agentStore{s: p.Session, id: id} },
	}
}

// learnings is AGENT.md, which every child is seeded with.
func (p *Project) learnings() string {
	data, err := afero.ReadFile(p.Fs, filepath.Join(p.Root, memory.AgentFile))
	if err != nil {
		return ""
	}
	if len(data) > 8<<10 {
		data = data[:8<<10]
	}
	return string(data)
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

// Prior is the resumed session's saved state, or nil for a new session.
func (p *Project) Prior() *memory.State {
	if !p.Resumed {
		return nil
	}
	st := p.Session.State()
	return &st
}

// Close ends the event subscriptions, records the final state in the
// registry and releases the lock.
func (p *Project) Close() error {
	var errs []error
	// Newest first: a face drains before the recorder under it stops.
	for i := len(p.unsubscribe) - 1; i >= 0; i-- {
		errs = append(errs, p.unsubscribe[i]())
	}
	p.unsubscribe = nil
	p.touchRegistry()
	errs = append(errs, p.Session.Close())
	return errors.Join(append(errs, p.Lock.Release())...)
}

func (p *Project) touchRegistry() {
	if p.Session == nil {
		return
	}
	st := p.Session.State()
	// The registry is a convenience index; failing to update it must not
	// fail the run.
	_ = p.registry.Update(memory.RegistryEntry{Root: p.Root, SessionID: st.SessionID, Status: st.Status, Mode: st.Mode, UpdatedAt: time.Now().UTC()})
}

// commandEnv is the environment for run_command without ralph's model key:
// nothing a command does needs it, and its output could otherwise carry it
// into the conversation.
func commandEnv(keyVar string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == keyVar || name == "OPENAI_API_KEY" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// SystemPrompt is the coordinator's system prompt: who it is, its tools,
// and the project's markdown state so it picks up where it left off.
func (p *Project) SystemPrompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are ralph, an AI coding agent working in the project at %s.
You act through tools: read_file, write_file, edit_file, list_files, search and run_command; remember saves a lasting learning about the project to AGENT.md; complete_task marks a task of RALPH_TASKS.md done.
Paths are relative to the project root; you cannot touch files outside it.
Work step by step: inspect before you change, make focused edits, and verify with commands when that helps.
When the task is done, answer with a short summary of what you did. Today is %s.`, p.Root, time.Now().Format("2006-01-02"))
	docs, err := memory.LoadStateDocs(p.Fs, p.Root, 16<<10, 8<<10)
	if err == nil && len(docs) > 0 {
		b.WriteString("\n\nThe project's state files, as they are now:\n\n")
		b.WriteString(memory.ContextBlock(docs))
	}
	return b.String()
}

// allowedFirst approves commands whose prefixes were approved "always"
// (allowed_commands) without asking, in every face, and asks next for the
// rest.
type allowedFirst struct {
	allowed []string
	next    workers.Approver
}

func (a allowedFirst) ApproveCommand(ctx context.Context, cmd string) workers.Decision {
	if config.PrefixesAllowed(a.allowed, cmd) {
		return workers.Decision{Allowed: true}
	}
	return a.next.ApproveCommand(ctx, cmd)
}
