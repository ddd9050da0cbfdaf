package project

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/instructions"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/coordinator/takeover"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/gitcreds"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The steps of Open, in the order it takes them.

// withNotices fills in opts' defaults and puts every notice of the
// project's through one door, which it returns. Many quote what a file
// the model can write says (a settings file's event name, a bad matcher,
// a skill's name), so control characters are made visible here, once,
// rather than at each notice.
func withNotices(opts *Options) *notices {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Notify == nil {
		opts.Notify = func(string) {}
	}
	door := &notices{to: opts.Notify}
	opts.Notify = func(s string) { door.say(text.Visible(s)) }
	return door
}

// place finds the project's root, refuses an --add-dir ralph does not
// grant, and sets opts.Fs to the project's door: ralph's own files under
// the project go through it, and the person's config and the registry,
// outside it, through theirs (person). A test's in-memory file system
// serves both.
func place(opts *Options) (root string, person afero.Fs, err error) {
	root, err = projectroot.Root(opts.Dir, opts.Overrides.AllowHome)
	if err != nil {
		return "", nil, err
	}
	for _, d := range opts.AddDirs {
		if err := projectroot.Grantable(d, "--add-dir", opts.Overrides.AllowHome); err != nil {
			return "", nil, err
		}
	}
	person = opts.Fs
	if opts.Fs == nil {
		if opts.Fs, err = rootfs.New(root); err != nil {
			return "", nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		person = rootfs.Person()
	}
	return root, person, nil
}

// loadConfig is the configuration of the files and the environment with
// the command line's settings over it.
func loadConfig(opts Options, root string, person afero.Fs) (config.Config, error) {
	cfg, err := config.Load(config.Sources{Fs: opts.Fs, UserFs: person, ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: opts.Getenv})
	if err != nil {
		return cfg, err
	}
	return cfg, opts.Overrides.apply(&cfg)
}

// warmUp starts the model's connection beside the lock and the session
// record, which wait for the disk, and fails a new session that cannot
// talk to its model before the lock is taken; a resumed one is checked
// once its mode is known. It runs after the look at git, whose status is
// the longer way to the first request: the goroutine started last waits
// for this one's processor (runnext), the one before it goes to the
// first idle one.
func warmUp(opts Options, cfg config.Config) error {
	llm.Warm(cfg.Protocol, cfg.BaseURL, cfg.Model, cfg.Wire)
	if !opts.Resume && opts.Mode != ModeRun {
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	if runsOnce(opts.Mode) && cfg.BaseURL != "" {
		llm.Preconnect(cfg.BaseURL)
	}
	return nil
}

// warmProcessStart has Go make, beside finding the project and reading
// its config, the one check it makes before the first process it starts:
// whether this kernel's pidfds work, which starts a child that exits at
// once and waits for it. Made by the first os/exec Start, it lay between
// the first look's git status and the start of that git, the first
// process a session starts, on the way to a one-shot's first request.
// os.FindProcess makes the same check, once for the whole process; the
// goroutine ends as soon as it has, and nothing waits for it.
func warmProcessStart() {
	go func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Release()
		}
	}()
}

// newProject is the project before its lock: its doors, its redactor,
// its registry, the session's git and its instructions.
func newProject(opts Options, root string, person afero.Fs, cfg config.Config, tracker *checkpoint.Tracker, door *notices) *Project {
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
		// too, as the Edit(…) rules are (the approval's Cwd).
		Door:     kept.New(kept.Options{Root: root, Kept: projectroot.Kept(), Home: home, Cwd: filepath.Join(root, start)}),
		registry: memory.OpenRegistry(person, memory.RegistryDir(opts.Getenv)), git: tracker,
		StartDir: start, appendSystem: opts.AppendSystem, notify: opts.Notify, notices: door}
	p.instructions = &instructions.Reader{Root: root, StartDir: start, Fs: opts.Fs, Door: p.Door, Links: cfg.InstructionLinks, Notify: opts.Notify}
	return p
}

// readDefinitions reads the plugins and the agent definitions before the
// lock is taken, so a one-shot naming one the project lacks fails before
// any session is recorded.
func (p *Project) readDefinitions(opts Options) error {
	var pluginWarnings []string
	p.Plugins, pluginWarnings = AddedPlugins(opts.Fs, p.Root)
	for _, w := range pluginWarnings {
		opts.Notify("warning: " + text.StripControls(w))
	}
	p.loadDefinitions(opts.Notify, PluginDefinitionDirs(p.Plugins)...)
	return p.chooseDefinition(opts.Definition)
}

// wire makes what the session works with once it is recorded: its hooks,
// approval policy, tools, MCP servers, skills and model client, then the
// registry's update and the retention policy beside it.
func (p *Project) wire(opts Options, cfg config.Config) error {
	p.Yes = opts.Yes
	loadedHooks, hookSrc := p.loadHooks(opts, cfg)
	p.newApproval(opts, cfg, loadedHooks)
	if err := p.newTools(opts, cfg, loadedHooks); err != nil {
		return err
	}
	for _, w := range cfg.MCPWarnings {
		opts.Notify(w)
	}
	if note := models.WebSearchNote(cfg); note != "" {
		opts.Notify(note)
	}
	p.wireHooks(opts, cfg, loadedHooks, hookSrc)
	p.MCP = NewMCP(p.Root, cfg, p.Approval, p.mcpNotice(opts.Notify), p.Tools.Workspace())
	p.Tools.AddSource(p.MCP)
	p.Tools.Add(tools.Deps{Fs: opts.Fs, Root: p.Root, Redact: p.Redactor, Decide: p.decide, Asker: p.Approval, Todo: p.setTodo})
	p.loadSkills()
	p.Tools.Add(tools.Deps{Skills: p.Skills, Root: p.Root})
	var err error
	p.Client, err = models.WithFallbacks(llm.New(models.ClientConfig(p.Config)), cfg.Fallback, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	p.registerBeside()
	p.startRetention()
	return nil
}

// recover recovers the project under its lock from a ralph that is gone
// (takeover.Recover) and keeps what it found: the tasks it settled, and
// the prompt of a session a crash left half made.
func (p *Project) recover(notify func(string)) error {
	rec, err := takeover.Recover(p.Fs, p.Root, p.Lock, notify)
	p.recovered, p.unfinished = rec.Recovered, rec.Unfinished
	return err
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
