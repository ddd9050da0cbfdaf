// Package project opens a project for one ralph process: it resolves the
// configuration, takes the project lock, recovers from a crashed run,
// creates or reopens the session record and builds the model client and
// tools. Every face (one-shot, chat, the task loop) starts here, so the
// rules about locks and recovery live in one place. What is built on an
// open project lives beside it and imports it, never the other way:
// a run's assembly (coordinator/assemble), undo and diff
// (coordinator/undo), git's part in the task loop (coordinator/taskgit).
package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/instructions"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/sessionhooks"
	"github.com/ralph-dev/ralph/coordinator/takeover"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/lsp"
	"github.com/ralph-dev/ralph/workers/mcp"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Overrides are the command line's settings, which beat every config
// source. The command line's settings table (scripts) makes them, and a
// ralph-temporal worker makes them of the settings a run carries to it
// (remote.Session.Tighten): this package names no flag.
type Overrides struct {
	// Apply puts the settings over the configuration resolved from the
	// files and the environment; nil changes nothing. An error is bad
	// input: it matches config.ErrInvalid.
	Apply func(*config.Config) error
	// Saved are the config keys of the settings a session's record
	// saves ("model") that they give: a resumed session keeps its own
	// of the others.
	Saved []string
	// AllowHome is the person's --allow-home-project: the project or an
	// --add-dir may be a directory Grantable refuses otherwise.
	AllowHome bool
}

// gives reports whether the overrides give the saved setting key.
func (o Overrides) gives(key string) bool { return slices.Contains(o.Saved, key) }

// apply puts o over cfg, then resolves the provider again (config.Resolve):
// a flag such as --provider, --base-url or --model decides which provider,
// endpoint and key the session uses, so the resolution runs after them,
// here, where every session's configuration is settled.
func (o Overrides) apply(cfg *config.Config) error {
	if o.Apply != nil {
		if err := o.Apply(cfg); err != nil {
			if errors.Is(err, config.ErrInvalid) {
				return err
			}
			return fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
	}
	return cfg.Resolve()
}

// Modes of a session, as session.json records them.
const (
	ModeOneShot = "oneshot"
	ModeChat    = "chat"
	ModeScript  = "script"
	ModeRun     = "run"
	// ModePlan is `ralph plan`: a one-shot in all but its record, so that
	// ralph status and the reports say what the session was.
	ModePlan = "plan"
	// ModeReview is `ralph review`: reviewer agents over a change, a
	// one-shot in how it runs, recorded as what it was.
	ModeReview = "review"
)

// runsOnce says whether a mode answers one request and exits, as a
// one-shot and a plan do: such a session connects to its model and binds
// its control socket ahead, beside the disk work of opening.
func runsOnce(mode string) bool {
	return mode == ModeOneShot || mode == ModePlan || mode == ModeReview
}

// Options says how to open the project.
type Options struct {
	// Dir is the project directory given with -C; "" finds the project
	// from the working directory (see Root).
	Dir    string
	Fs     afero.Fs // nil: the project's door (memory/rootfs) and the person's own directories
	Getenv func(string) string
	// Overrides are the command line's settings.
	Overrides Overrides
	// Parallel bounds concurrent child agents (--parallel; 0: 4).
	Parallel int
	// Mode is the face that opens the project. With Resume, "" continues
	// the session in the mode it was started in.
	Mode string
	// Resume continues a session instead of starting one: SessionID names
	// it (a full id or any unique part of one), or "" for the latest.
	Resume    bool
	SessionID string
	Force     bool
	// Yes approves every command that stays in the sandbox (--yes).
	Yes bool
	// Answers say whether and how long a question nobody at a terminal
	// can answer waits for ralph answer.
	Answers Answers
	// Run settles the task loop's configuration when the session's mode is
	// run: it gets the saved configuration of a resumed session (nil for a
	// new one) and returns the one to use, which is saved in session.json.
	// An error is bad input (exit 2) and nothing is changed.
	Run func(saved *memory.RunConfig) (*memory.RunConfig, error)
	// Notify receives one-line notices for the user (crash recovered, ...).
	Notify func(string)
	// Plugins are the plugin directories whose hooks the session reads
	// (memory/plugins lists them).
	Plugins []sessionhooks.Plugin
	// Editor, when set, is the editor whose buffers the file tools read
	// and write instead of the disk (ralph acp with a client that offers
	// fs/read_text_file and fs/write_text_file): every Workspace of the
	// session gets it, children's and the task loop's too. nil: the disk.
	Editor workers.EditorFiles
	// Conventions are the flags people bring from other agents.
	Conventions
}

// Project is an opened project. Close it on every exit path.
type Project struct {
	// sessionEnv is what the session adds to the model's commands'
	// environment (childenv.Session; sessionenv.go).
	sessionEnv *childenv.Session
	// plan is the latest plan made here (StartPlan), for DropPlan.
	planMu sync.Mutex
	plan   *tools.PlanWriter

	Root string
	// Fs is the project's door (memory/rootfs); Person holds the
	// person's own directories outside it (config, registry).
	Fs     afero.Fs
	Person afero.Fs
	Config config.Config
	// stateKey seals the run settings ralph saves (memory.Seal); nil when
	// the person's config directory cannot hold it (keyErr says why).
	stateKey []byte
	keyErr   error
	// gens keeps the latest sealed generation of each session in ralph's
	// state directory (memory.Generations), so that an older record a
	// command put back is refused.
	gens    *memory.Generations
	Lock    *memory.Lock
	Session *memory.Session
	Client  *llm.Client
	Tools   *tools.Toolset
	// MCP holds the MCP servers, whose tools are among Tools; they start
	// when the first model request needs them and stop at Close.
	MCP *mcp.Manager
	// Approval decides which commands run_command may run. Nobody is
	// asked until a face that has a person sets its Asker.
	Approval *approval.Policy
	// Yes is --yes: every command the sandbox contains runs unasked.
	Yes bool
	// Hooks are the session's hooks (Claude Code's protocol): the
	// person's own, and the project's once approved. nil runs none.
	Hooks *hooks.Set
	// Plugins are the Claude Code plugins the person added (ralph plugin
	// add), read when the session opened; their hooks, skills, commands
	// and agent definitions are among the session's.
	Plugins []plugins.Plugin
	// Skills are the session's skills (memory/skills), found once at its
	// start: the system prompt lists them and the skill tool loads them.
	// nil (a test's in-memory project) has none.
	Skills *skills.Set
	// Definitions are the agent definitions of the project and the
	// person (workers/agentdefs), read when the session opened.
	Definitions agentdefs.Set
	// mainDef is the definition the conversation's agent follows (--agent
	// def:NAME), nil for ralph's own.
	mainDef *agentdefs.Def
	// agentHooks are the hooks of the definitions' front matter, by
	// definition (agenthooks.go).
	agentHooks *sessionhooks.AgentSets
	// Redactor takes the API key out of every file ralph writes for this
	// project: the session record, the chat history, AGENT.md,
	// RALPH_PROGRESS.md, config.
	Redactor *memory.Redactor
	// gitSecrets are the credentials in the project's repositories'
	// configuration (gitcreds.Secrets) and the values of the files the
	// person's Read(…) deny rules name (kept.Rules.Values), read when the
	// project opened.
	gitSecrets []string
	// Door is the one door for every file whose text enters a request
	// (memory/kept): the kept list, the person's Read(…) deny rules and
	// the masking of the repositories' credentials, by what a file is.
	Door *kept.Door
	// Mode is the session's mode: the face's, or a resumed session's own.
	Mode string
	// History is the saved conversation of a resumed session, repaired so
	// every tool call has a result.
	History []conversation.Message
	Resumed bool
	// Status is the status of a resumed session before this process.
	PriorStatus string
	registry    *memory.Registry
	// registered closes when the registry knows this session is running:
	// an update that runs beside the first request (see Open).
	registered chan struct{}
	parallel   int
	// recovered is what recovery did with the tasks a ralph that is gone
	// left in progress.
	recovered planfile.Recovered
	// prompt is the task loop's prompt template (loadPrompt), nil for
	// ralph's own prompt.
	prompt *taskprompt.Template
	// coord is the coordinator whose events the face follows; face ends
	// the face's subscription, unsubscribe the recorders'.
	coord     *coordinator.Coordinator
	recording *coordinator.Recording
	// git is the session's git: the first look at the work tree, the
	// pinning, the checkpoints and the checkpoint log (git.go).
	git *checkpoint.Tracker
	// idle lets the lock go while a chat waits at its prompt (idle.go).
	idle idleLock
	// warnTo is the coordinator that tells the person about a failed
	// checkpoint, and records the decisions made beside it (decide),
	// both of which happen on goroutines of their own.
	warnTo atomic.Pointer[coordinator.Coordinator]
	// todoErr is the first error keeping the todo list in session.json:
	// the model is told at once, and the run's result says it (RecordErr).
	todoErr atomic.Pointer[error]
	// loopControl is the control of the task loop last set up in this
	// session, which the conversation's saves heed (besideLoop).
	loopControl atomic.Pointer[loop.Control]
	face        func()
	unsubscribe []func() error
	// bound is the control socket being bound ahead of Serve, if any.
	bound chan boundSocket
	// control is the control socket (Serve) and questions the questions
	// asked through it.
	control   *control.Server
	questions *control.Questions
	// answers are Options.Answers (see waiting).
	answers Answers
	// pruning is the retention policy's pruning under way, if any.
	pruning *pruning
	// placing says the session was created beside the first request
	// (memory.CreateSessionBeside): its record may not be durable yet.
	placing bool
	// unfinished is the prompt of a session a crash left half made,
	// which recovery removed (memory.UnfinishedPrompt); "" for none.
	unfinished string
	// StartDir is the directory the person started in, relative to Root
	// ("." at the root); appendSystem is --append-system-prompt.
	StartDir     string
	appendSystem string
	// notify tells the person something (Options.Notify).
	notify func(string)
	// instructions reads the instructions files (coordinator/instructions).
	instructions *instructions.Reader
	// notices is where notify's notices go (Attach routes them to the
	// face).
	notices *notices
}

// Open finds the project, locks it, recovers from a crashed run and
// decides — under the lock — whether this is a new session or which one
// continues and in which mode. The session's state is on disk before Open
// returns, before any task or file is touched, so recovery after a crash
// at any later moment is exact.
// Errors: config.ErrInvalid (exit 2), memory.ErrLocked (exit 3),
// memory.ErrNoSession for a resume with nothing to resume (exit 2),
// ErrBadRunConfig (exit 2).
func Open(ctx context.Context, opts Options) (*Project, error) {
	p, err := open(ctx, opts)
	// A state file over the size ralph reads is said alone, whatever step
	// of the bring-up met it: the file, its size and the limit are what
	// the person needs, in every face.
	var tooLarge *rootfs.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, tooLarge
	}
	return p, err
}

func open(ctx context.Context, opts Options) (*Project, error) {
	if rootfs.IsReal(opts.Fs) {
		warmProcessStart()
		memory.WarmCodecs(event.Event{})
	}
	door := withNotices(&opts)
	root, person, err := place(&opts)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(opts, root, person)
	if err != nil {
		return nil, err
	}
	// The model's commands write the sandbox_writable directories too: a
	// git the model left in ~/.cargo/bin, first on PATH, must not be the
	// one the first look at the work tree runs as the person.
	childenv.AddRoots(slices.Concat(cfg.SandboxWritable, opts.AddDirs)...)
	// Git, sockets and connections need the real file system; tests on
	// a memory one have none of them.
	real := rootfs.IsReal(opts.Fs)
	tracker := checkpoint.New(root, opts.Fs, real)
	if real {
		// The programs the toolset looks up on PATH as it is made
		// (wire) are looked up beside the lock, the recovery and the
		// session record instead; the roots are all known by now.
		lsp.Warm(cfg.LSP)
		workers.WarmShell()
	}
	if err := warmUp(opts, cfg); err != nil {
		return nil, err
	}
	p := newProject(opts, root, person, cfg, tracker, door)
	if err := p.readDefinitions(opts); err != nil {
		return nil, err
	}
	p.stateKey, p.keyErr = memory.StateKey(person, filepath.Join(config.UserConfigDir(), "ralph"))
	p.gens = memory.OpenGenerations(person, memory.RegistryDir(opts.Getenv), root)
	lock, err := takeover.Acquire(opts.Fs, root, opts.Force, opts.Notify, cfg.APIKey)
	if err != nil {
		return nil, err
	}
	p.Lock = lock
	ok := false
	defer func() {
		if !ok {
			_ = p.closeControl()
			_ = lock.Release()
		}
	}()
	if real && runsOnce(opts.Mode) {
		// A one-shot serves its control socket (Serve) as soon as it
		// runs; bound now, under the lock, beside recovery and the
		// session record, which wait for the disk.
		p.bindAhead()
	}
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
	if err := p.wire(opts, cfg); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

// Close ends the event subscriptions, waits for the registry's update
// and releases the lock.
func (p *Project) Close() error {
	// The session ends for its hooks (SessionEnd) while its events are
	// still recorded, however it ended.
	if p.coord != nil {
		p.coord.EndSession(context.Background())
	}
	// The control socket goes first, while the lock still says this ralph
	// runs: its watchers get every event so far, then the end.
	errs := []error{p.closeControl()}
	// Pruning ends before the recorders do: what it pruned is a decision
	// that goes through them.
	p.stopRetention()
	// The face drains first, then the recorders, newest first.
	p.SetSink(nil, false)
	for i := len(p.unsubscribe) - 1; i >= 0; i-- {
		errs = append(errs, p.unsubscribe[i]())
	}
	p.unsubscribe = nil
	// The checkpoints' record goes to the session, closed below.
	p.git.Close()
	if p.MCP != nil {
		p.MCP.Close()
	}
	if p.Tools != nil {
		p.Tools.Close()
	}
	if p.registered != nil {
		<-p.registered
	}
	errs = append(errs, p.Session.Close())
	return errors.Join(append(errs, p.Lock.Release())...)
}

// mcpNotice tells the person about an MCP server (it could not start, it
// crashed): as a warning in the running conversation's events, or before
// there is one, as a notice.
func (p *Project) mcpNotice(notify func(string)) func(string) {
	return func(text string) {
		if c := p.warnTo.Load(); c != nil {
			c.Warn(text)
			return
		}
		notify(text)
	}
}

// secrets are what no file ralph writes may hold: the API key, the MCP
// servers' tokens and the credentials in the project's repositories.
func (p *Project) secrets() []string { return append(p.Config.Secrets(), p.gitSecrets...) }

func (p *Project) touchRegistry() {
	if p.Session == nil {
		return
	}
	st := p.Session.State()
	// The registry is a convenience index; failing to update it must not
	// fail the run.
	_ = p.registry.Update(memory.RegistryEntry{Root: p.Root, SessionID: st.SessionID, Mode: st.Mode, UpdatedAt: time.Now().UTC()})
}

// commandEnv is the environment for MCP servers without ralph's model key:
// nothing a server does needs it, and its output could otherwise carry it
// into the conversation. run_command's is childenv.ForCommands.
func commandEnv(keyVar string) []string {
	return childenv.Without(os.Environ(), keyVar)
}

// ErrUsage is bad input a room above this one finds once the project is
// open (coordinator/undo's "nothing to take back", a project outside
// git): exit 2, as config.ErrInvalid. Those rooms' own sentinel errors
// match it, so their sentences stay as they are.
var ErrUsage = errors.New("bad input")

// Parallel is --parallel, the bound on concurrent child agents (0: the
// default).
func (p *Project) Parallel() int { return p.parallel }

// SetLoopControl makes ctl the control of the task loop set up in this
// session, which the conversation's saves heed (besideLoop).
func (p *Project) SetLoopControl(ctl *loop.Control) { p.loopControl.Store(ctl) }

// ExitCode maps an error from Open to ralph's exit codes: 2 for bad input
// or configuration, 3 when another ralph holds the project, 1 otherwise.
func ExitCode(err error) int {
	switch {
	case errors.Is(err, config.ErrInvalid), errors.Is(err, memory.ErrNoSession), errors.Is(err, memory.ErrNewerState),
		errors.Is(err, ErrBadRunConfig), errors.Is(err, ErrUsage), errors.Is(err, planfile.ErrNoTasks), errors.Is(err, planfile.ErrPlan),
		errors.Is(err, memory.ErrNotWritable):
		return 2
	case errors.Is(err, rootfs.ErrTooLarge):
		return 2 // bad input, as a config file that does not parse
	case errors.Is(err, memory.ErrLocked):
		return 3
	}
	return 1
}

// toolFamily is the configuration's tool_family, nil when it names none
// (each model is offered its own family's tools).
func toolFamily(name string) *providers.ToolFamily {
	if name == "" {
		return nil
	}
	f, _ := providers.FamilyNamed(name) // the configuration checked it
	return &f
}
