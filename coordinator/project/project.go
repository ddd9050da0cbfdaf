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
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/gitcreds"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/mcp"
	"github.com/ralph-dev/ralph/workers/sandbox"
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
	Plugins []Plugin
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
	agentHooks *agentHookSets
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
	// notify tells the person something (Options.Notify); leftOutSaid
	// the instructions files already said to be left out (leftOut).
	notify      func(string)
	leftOutSaid sync.Map
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
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Notify == nil {
		opts.Notify = func(string) {}
	}
	// Every notice of the project's goes to the terminal through this one
	// door. Many quote what a file the model can write says (a settings
	// file's event name, a bad matcher, a skill's name), so control
	// characters are made visible here, once, rather than at each notice.
	door := &notices{to: opts.Notify}
	opts.Notify = func(s string) { door.say(text.Visible(s)) }
	root, err := Root(opts.Dir, opts.Overrides.AllowHome)
	if err != nil {
		return nil, err
	}
	for _, d := range opts.AddDirs {
		if err := Grantable(d, "--add-dir", opts.Overrides.AllowHome); err != nil {
			return nil, err
		}
	}
	// ralph's own files under the project go through the project's door;
	// the person's config and the registry, outside it, through theirs.
	// A test's in-memory file system serves both.
	person := opts.Fs
	if opts.Fs == nil {
		if opts.Fs, err = rootfs.New(root); err != nil {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		person = rootfs.Person()
	}
	// Git, sockets and connections need the real file system; tests on
	// a memory one have none of them.
	real := rootfs.IsReal(opts.Fs)
	cfg, err := config.Load(config.Sources{Fs: opts.Fs, UserFs: person, ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: opts.Getenv})
	if err != nil {
		return nil, err
	}
	if err := opts.Overrides.apply(&cfg); err != nil {
		return nil, err
	}
	// The model's commands write the sandbox_writable directories too: a
	// git the model left in ~/.cargo/bin, first on PATH, must not be the
	// one the first look at the work tree runs as the person.
	childenv.AddRoots(slices.Concat(cfg.SandboxWritable, opts.AddDirs)...)
	tracker := checkpoint.New(root, opts.Fs, real)
	// Beside the lock and the session record, which wait for the disk;
	// after the look at git, whose status is the longer way to the first
	// request: the goroutine started last waits for this one's processor
	// (runnext), the one before it goes to the first idle one.
	llm.Warm(cfg.Protocol, cfg.BaseURL, cfg.Model, cfg.Wire)
	// A new session that cannot talk to its model fails before the lock
	// is taken; a resumed one is checked once its mode is known.
	if !opts.Resume && opts.Mode != ModeRun {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	if runsOnce(opts.Mode) && cfg.BaseURL != "" {
		// Beside the lock and the session record, which wait for the disk.
		llm.Preconnect(cfg.BaseURL)
	}
	// The credentials the project's repositories hold (the workflow's
	// token that actions/checkout left in .git/config, a remote's
	// password) are secrets too: the model reads masked copies, and
	// ralph's records and the results the model is sent never carry them,
	// even where a command reads the file itself (the Landlock-only
	// sandbox binds no masked copy over it).
	gitSecrets := gitcreds.Secrets(opts.Fs, root)
	home, _ := os.UserHomeDir()
	start := startRel(root, startDir(opts.StartDir))
	p := &Project{Root: root, Fs: opts.Fs, Person: person, Config: cfg, parallel: opts.Parallel, answers: opts.Answers,
		Redactor: memory.NewRedactor(append(cfg.Secrets(), gitSecrets...)...), gitSecrets: gitSecrets,
		// A Read(…) rule's ./path is read from where the person started
		// too, as the Edit(…) rules are (the approval's Cwd below).
		Door:     kept.New(kept.Options{Root: root, Kept: Kept(), Home: home, Cwd: filepath.Join(root, start)}),
		registry: memory.OpenRegistry(person, memory.RegistryDir(opts.Getenv)), git: tracker,
		StartDir: start, appendSystem: opts.AppendSystem, notify: opts.Notify, notices: door}
	// The definitions are read before the lock is taken, so a one-shot
	// naming one the project lacks fails before any session is recorded.
	var pluginWarnings []string
	p.Plugins, pluginWarnings = AddedPlugins(opts.Fs, root)
	for _, w := range pluginWarnings {
		opts.Notify("warning: " + text.StripControls(w))
	}
	p.loadDefinitions(opts.Notify, PluginDefinitionDirs(p.Plugins)...)
	if err := p.chooseDefinition(opts.Definition); err != nil {
		return nil, err
	}
	p.stateKey, p.keyErr = memory.StateKey(person, filepath.Join(config.UserConfigDir(), "ralph"))
	p.gens = memory.OpenGenerations(person, memory.RegistryDir(opts.Getenv), root)
	lock, err := acquire(opts.Fs, root, opts.Force, opts.Notify, cfg.APIKey)
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
	p.Yes = opts.Yes
	// The hooks are read before the policy, with the settings files'
	// permission rules (permissions.go): the person's allow, ask and
	// deny; a project's ask and deny, never an allow.
	hookSrc := hookSources(root, opts.Fs, person, cfg, append(slices.Clone(opts.Plugins), PluginHooks(p.Plugins)...))
	hookSrc.Definitions = &p.Definitions
	loadedHooks := LoadHooks(hookSrc)
	// The settings files' Read(…) deny rules join the session's door
	// before any prompt is built or tool made; the definitions, read
	// before them, are judged by them now.
	p.Door.Deny(loadedHooks.ReadRules...)
	// What the files those rules name hold is redacted from every result
	// the model is sent, as the repositories' credentials are: where the
	// sandbox cannot hide such a file from commands (the Landlock-only
	// fallback, inside the project) a command's cat of it still reaches
	// the model masked. Nothing has taken the redactor yet.
	if vals := loadedHooks.ReadRules.Values(root); len(vals) > 0 {
		p.gitSecrets = append(p.gitSecrets, vals...)
		p.Redactor = memory.NewRedactor(p.secrets()...)
	}
	for _, w := range p.Definitions.Judge(p.Door) {
		opts.Notify(w)
	}
	p.Approval = approval.New(approval.Options{
		Fs: opts.Fs, UserFs: person, Root: root, UserConfigDir: config.UserConfigDir(),
		UserRules: cfg.AllowedCommands, ProjectRules: cfg.ProjectAllowedCommands, Yes: opts.Yes, Redactor: p.Redactor, AskBefore: cfg.AskBefore,
		// A person's answers go to the session's decisions.jsonl. A write
		// that fails is not the approval's business: the run's other
		// records, on the same disk, report it.
		Record: func(d memory.DecisionRecord) { _ = p.decide(d) },
		Tools:  opts.Tools.With(loadedHooks.Rules), NeverAsk: opts.NeverAsk,
		Fetch: approval.FetchRules{Allow: cfg.WebFetchAllow},
		// Edit(…) and Write(…) rules written relative to where the
		// person started are read from there too.
		Cwd: startDir(opts.StartDir),
	})
	if n := p.Approval.Ignored(); n > 0 {
		opts.Notify(fmt.Sprintf("ignoring %d allowed_commands in %s that were not approved on this machine; approve them again with \"always\" in chat",
			n, config.ProjectFile))
	}
	// The notices of variables withheld are said once per person for each
	// set of names (memory/shown), remembered in the person's state
	// directory, where the model's commands cannot write.
	seen := shown.Open(person, memory.RegistryDir(opts.Getenv))
	p.sessionEnv = personSessionEnv(loadedHooks.PersonEnv, seen, opts.Notify)
	addProjectEnv(p.sessionEnv, loadedHooks.ProjectEnvs, root, seen, opts.Notify)
	withheld := childenv.Withheld(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv)
	p.Tools, err = tools.NewToolset(tools.Options{Approver: p.Approval, AutoApprove: opts.Yes, Redact: p.Redactor, Family: toolFamily(cfg.ToolFamily), WebFetchAllowPrivate: cfg.WebFetchAllowPrivate,
		LSP: &cfg.LSP, ApproveLSP: p.approveLanguageServer, Options: workers.Options{
			Root: root, CommandTimeout: cfg.CommandTimeout,
			Env:     childenv.ForCommands(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv),
			Sandbox: sandbox.Mode(cfg.Sandbox), NoNetwork: !cfg.Network, Writable: cfg.SandboxWritable, UnixSockets: cfg.SandboxUnixSockets,
			Readable: cfg.SandboxReadable,
			Notify:   opts.Notify, AddDirs: opts.AddDirs, Kept: Kept(), Door: p.Door,
			Withheld: withheld, Settings: childenv.Settings(os.Environ(), withheld), WithheldGit: childenv.WithheldGit(os.Environ()),
			SessionEnv: p.sessionEnv, Editor: opts.Editor, Seen: seen,
		}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	for _, w := range cfg.MCPWarnings {
		opts.Notify(w)
	}
	if note := models.WebSearchNote(cfg); note != "" {
		opts.Notify(note)
	}
	p.sayHooks(loadedHooks)
	p.Hooks = p.hookSet(loadedHooks, hookSrc, p.Tools.Workspace())
	if p.Hooks != nil {
		// Hooks written for Claude Code read its permission mode and its
		// JSONL transcript (transcript_path): a session with hooks keeps
		// one beside its own records (docs/hooks.md).
		p.Hooks.PermissionMode = hooks.PermissionMode(cfg.Sandbox == string(sandbox.ReadOnly), opts.Yes, opts.NeverAsk)
		p.Session.KeepHookTranscript(root)
	}
	p.agentHooks = &agentHookSets{make: func(agent string) *hooks.Set {
		set := p.hookSetOf(loadedHooks, hookSrc, p.Tools.Workspace(), agent)
		if set != nil && p.Hooks != nil {
			set.PermissionMode = p.Hooks.PermissionMode
		}
		return set
	}}
	p.MCP = NewMCP(root, cfg, p.Approval, p.mcpNotice(opts.Notify), p.Tools.Workspace())
	p.Tools.AddSource(p.MCP)
	p.Tools.Add(tools.Deps{Fs: opts.Fs, Root: root, Redact: p.Redactor, Decide: p.decide, Asker: p.Approval, Todo: p.setTodo})
	p.loadSkills()
	p.Tools.Add(tools.Deps{Skills: p.Skills, Root: root})
	p.Client, err = withFallbacks(llm.New(models.ClientConfig(p.Config)), cfg.Fallback, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	p.registerBeside()
	p.startRetention()
	ok = true
	return p, nil
}

// registerBeside tells the cross-project registry that this session runs,
// on a goroutine of its own: the registry is shared by every ralph of the
// user, behind a lock of its own, and nothing on the way to the first
// request needs it. Close waits for it, so it lands before ralph exits. A
// crash before it lands leaves the registry as it was, whole. The
// registry only names projects and the session last started in each;
// how a session ended is in the project's own records, which `ralph
// sessions` reads, so the end of a session writes nothing there: that
// second update cost about a millisecond at the end of every one-shot.
func (p *Project) registerBeside() {
	p.registered = make(chan struct{})
	go func() {
		defer close(p.registered)
		p.touchRegistry()
	}()
}

// start creates a new session, durable before anything else happens.
func (p *Project) start(opts Options) error {
	p.Mode = opts.Mode
	run, err := p.settle(opts, nil)
	if err != nil {
		return err
	}
	id := memory.NewID(time.Now())
	// A model with a known price has cost nothing yet; null means unknown.
	// Saying so now spares the run's first save a change to write.
	var cost *float64
	if p.PriceOf(p.Config.Model) != nil {
		cost = new(float64)
	}
	// The session is recorded only once the .gitignore of a .ralph/ its
	// lock made is durable.
	create := memory.CreateOptions{After: p.Lock.StateDirDurable}
	if runsOnce(p.Mode) {
		// A one-shot's record becomes durable beside its first request,
		// which changes nothing; every tool that may change a file waits
		// for it (the checkpoint tracker's placed gate, Checkpoints.Before), as every save does.
		create.Beside, p.placing = true, true
	}
	st := memory.State{
		SessionID: id, Status: memory.StatusRunning, Mode: p.Mode, Model: p.Config.Model, StartedAt: time.Now().UTC(), Run: run, CostUSD: cost,
	}
	p.seal(&st)
	s, err := memory.CreateSessionWith(p.Fs, p.Root, id, st, create, p.secrets()...)
	if err != nil {
		return fmt.Errorf("cannot record the session under %s: %w", p.Root, err)
	}
	if p.Mode == ModeReview {
		// A review sends no prompt of the person's for the session's
		// directory to wait for (memory.CreateSessionBeside).
		s.Place()
	}
	s.SealWith(p.stateKey, p.gens)
	p.Session = s
	return nil
}

// resume reopens a session, settles its mode and configuration, and
// repairs its history for the model.
func (p *Project) resume(opts Options) error {
	id, err := p.findResumable(opts)
	if p.unfinished != "" && opts.SessionID == "" {
		// The last ralph was stopped, or could not write, before its
		// session counted as one: -c goes on with the one before it, if
		// any, and says so.
		if errors.Is(err, memory.ErrNoSession) {
			return memory.NoSessionf("this project has no session to continue: the session for %s was never recorded (ralph was stopped, or could not write it); send that prompt again to start one", memory.QuotePrompt(p.unfinished))
		}
		if err == nil {
			opts.Notify(fmt.Sprintf("the session for %s was never recorded (ralph was stopped, or could not write it); continuing session %s, the one before it", memory.QuotePrompt(p.unfinished), id))
		}
	}
	if err != nil {
		return err
	}
	// A fork carries the settings of the session it copies, sealed
	// under that session's id.
	sealedAs := id
	if opts.ForkSession {
		// A conversation whose prompt was never saved has nothing for
		// the model to go on with, nor for a copy to begin with (issue 67).
		msgs, lerr := memory.LoadMessages(p.Fs, memory.SessionDir(p.Root, id))
		st, _ := memory.LoadSessionState(p.Fs, p.Root, id)
		if lerr == nil {
			if err := memory.PromptMissing(p.Fs, p.Root, id, st, msgs); err != nil {
				return err
			}
		}
		if id, err = p.fork(id); err != nil {
			return err
		}
	}
	s, msgs, err := memory.OpenSession(p.Fs, p.Root, id, p.secrets()...)
	if err != nil {
		return err
	}
	prior := s.State()
	if prior.Mode == "" {
		// A record rebuilt from the logs does not say what the session
		// was; its events do.
		prior.Mode = p.sessionMode(prior, id)
	}
	loop := opts.Mode == ModeRun || opts.Mode == "" && prior.Mode == ModeRun
	if r := s.Repaired; r != nil && r.Restored == "" && loop {
		// Its defaults would be looser than what the person chose.
		_ = s.Close()
		return usageErr{fmt.Errorf("the task loop of session %s cannot go on: %s, and no other copy holds the settings it saved (agent, verify, limits), so going on could skip a check you asked for; start it again with the flags you want: ralph run --agent … --verify …", id, r.Record())}
	} else if r != nil {
		opts.Notify(r.Sentence(id))
	}
	if err := memory.PromptMissing(p.Fs, p.Root, id, prior, msgs); err != nil && !opts.ForkSession {
		// A conversation whose prompt was never saved has nothing for the
		// model to go on with (issue 67).
		_ = s.Close()
		return err
	}
	if s.Hole != nil {
		// A conversation that lost a message in its middle is not the
		// one the model had: going on would answer from a history that
		// never was.
		_ = s.Close()
		return s.Hole
	}
	for _, l := range s.LinksDropped {
		opts.Notify(fmt.Sprintf("%s was a symbolic link, which a command may have planted; ralph removed it, followed nothing, and starts that log again", filepath.ToSlash(l)))
	}
	if err := p.trustSaved(&prior, sealedAs, loop, opts.Notify); err != nil {
		_ = s.Close()
		return err
	}
	s.SealWith(p.stateKey, p.gens)
	p.PriorStatus = prior.Status
	p.Mode = opts.Mode
	if p.Mode == "" {
		p.Mode = p.sessionMode(prior, id)
	}
	// The model a session was started with goes on unless this command
	// line or the environment names another.
	// The provider follows it where nothing else names one (a claude-…
	// model is Anthropic's), so the provider is resolved again.
	if prior.Model != "" && !opts.Overrides.gives("model") && opts.Getenv("RALPH_MODEL") == "" {
		p.Config.SetModel(prior.Model)
		if err := p.Config.Resolve(); err != nil {
			return err
		}
	}
	run, err := p.settle(opts, prior.Run)
	if err != nil {
		return err
	}
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
		st.Mode = p.Mode
		st.Model = p.Config.Model
		if run != nil {
			st.Run = run
		}
		st.EndedAt = time.Time{}
		st.Error = ""
	})
}

// sessionMode is the mode a session was started in. A session whose own
// record was lost (written by an older ralph, or damaged) is a task loop
// if it left tasks in progress or its events show task changes.
func (p *Project) sessionMode(st memory.State, id string) string {
	if st.Mode != "" {
		return st.Mode
	}
	if p.recovered.Count() > 0 {
		return ModeRun
	}
	mode := ModeOneShot
	_, _ = memory.EachJSONL(p.Fs, memory.LogPath(p.Root, id, memory.EventsLog), event.Marks(event.TaskChanged),
		func(ev event.Event) {
			if ev.Type == event.TaskChanged {
				mode = ModeRun
			}
		})
	return mode
}

// startedCalls lists the tool calls a session began executing, from its
// events: a call with a tool_call event but no result may have had effects.
// The log is streamed, and only its tool_call lines are decoded: a long
// run's events.jsonl is tens of megabytes, and a resume needs no more of
// it than this.
func startedCalls(fs afero.Fs, root, id string) (map[string]bool, error) {
	started := map[string]bool{}
	_, err := memory.EachJSONL(fs, memory.LogPath(root, id, memory.EventsLog), event.Marks(event.ToolCall),
		func(ev event.Event) {
			if ev.Type == event.ToolCall && ev.ToolID != "" {
				started[ev.ToolID] = true
			}
		})
	if err != nil {
		return nil, err
	}
	return started, nil
}

// Prior is the resumed session's saved state, or nil for a new session.
func (p *Project) Prior() *memory.State {
	if !p.Resumed {
		return nil
	}
	st := p.Session.State()
	return &st
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

// fork copies session from into a new session (--fork-session) and
// returns the copy's id, which is resumed in its place: the original is
// only read.
func (p *Project) fork(from string) (string, error) {
	id := memory.NewID(time.Now())
	if err := memory.ForkSession(p.Fs, p.Root, from, id); err != nil {
		return "", err
	}
	return id, nil
}

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
