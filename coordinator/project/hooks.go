package project

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/coordinator/sessionhooks"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The steps of Open that wire the session's hooks, its approval policy
// and its tools, in this order: the hooks are read with the settings
// files' permission rules and env, which the policy and the tools take.

// loadHooks reads the session's hooks (coordinator/sessionhooks) with the
// settings files' permission rules: the person's allow, ask and deny; a
// project's ask and deny, never an allow. Their Read(…) deny rules join
// the session's door before any prompt is built or tool made.
func (p *Project) loadHooks(opts Options, cfg config.Config) (sessionhooks.Loaded, sessionhooks.Sources) {
	src := sessionhooks.SourcesOf(p.Root, opts.Fs, p.Person, cfg, append(slices.Clone(opts.Plugins), sessionhooks.FromPlugins(p.Plugins)...))
	src.Definitions = &p.Definitions
	loaded := sessionhooks.Load(src)
	// The definitions, read before the rules, are judged by them now.
	p.Door.Deny(loaded.ReadRules...)
	// What the files those rules name hold is redacted from every result
	// the model is sent, as the repositories' credentials are: where the
	// sandbox cannot hide such a file from commands (the Landlock-only
	// fallback, inside the project) a command's cat of it still reaches
	// the model masked. Nothing has taken the redactor yet.
	if vals := loaded.ReadRules.Values(p.Root); len(vals) > 0 {
		p.gitSecrets = append(p.gitSecrets, vals...)
		p.Redactor = memory.NewRedactor(p.secrets()...)
	}
	for _, w := range p.Definitions.Judge(p.Door) {
		opts.Notify(w)
	}
	return loaded, src
}

// newApproval makes the session's one approval policy, with the settings
// files' rules loaded holds.
func (p *Project) newApproval(opts Options, cfg config.Config, loaded sessionhooks.Loaded) {
	p.Approval = approval.New(approval.Options{
		Fs: opts.Fs, UserFs: p.Person, Root: p.Root, UserConfigDir: config.UserConfigDir(),
		UserRules: cfg.AllowedCommands, ProjectRules: cfg.ProjectAllowedCommands, Yes: opts.Yes, Redactor: p.Redactor, AskBefore: cfg.AskBefore,
		// A person's answers go to the session's decisions.jsonl. A write
		// that fails is not the approval's business: the run's other
		// records, on the same disk, report it.
		Record: func(d memory.DecisionRecord) { _ = p.decide(d) },
		Tools:  opts.Tools.With(loaded.Rules), NeverAsk: opts.NeverAsk,
		Fetch: approval.FetchRules{Allow: cfg.WebFetchAllow},
		// Edit(…) and Write(…) rules written relative to where the
		// person started are read from there too.
		Cwd: startDir(opts.StartDir),
	})
	if n := p.Approval.Ignored(); n > 0 {
		opts.Notify(fmt.Sprintf("ignoring %d allowed_commands in %s that were not approved on this machine; approve them again with \"always\" in chat",
			n, config.ProjectFile))
	}
}

// newTools makes the session's environment for the model's commands (the
// settings files' env) and its tools.
func (p *Project) newTools(opts Options, cfg config.Config, loaded sessionhooks.Loaded) error {
	// The notices of variables withheld are said once per person for each
	// set of names (memory/shown), remembered in the person's state
	// directory, where the model's commands cannot write.
	seen := shown.Open(p.Person, memory.RegistryDir(opts.Getenv))
	p.sessionEnv = sessionhooks.PersonEnv(loaded.PersonEnv, seen, opts.Notify)
	sessionhooks.AddProjectEnv(p.sessionEnv, loaded.ProjectEnvs, p.Root, seen, opts.Notify)
	withheld := childenv.Withheld(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv)
	var err error
	p.Tools, err = tools.NewToolset(tools.Options{Approver: p.Approval, AutoApprove: opts.Yes, Redact: p.Redactor, Family: toolFamily(cfg.ToolFamily), WebFetchAllowPrivate: cfg.WebFetchAllowPrivate,
		LSP: &cfg.LSP, ApproveLSP: p.approveLanguageServer, Options: workers.Options{
			Root: p.Root, CommandTimeout: cfg.CommandTimeout,
			Env:     childenv.ForCommands(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv),
			Sandbox: sandbox.Mode(cfg.Sandbox), NoNetwork: !cfg.Network, Writable: cfg.SandboxWritable, UnixSockets: cfg.SandboxUnixSockets,
			Readable: cfg.SandboxReadable,
			Notify:   opts.Notify, AddDirs: opts.AddDirs, Kept: projectroot.Kept(), Door: p.Door,
			Withheld: withheld, Settings: childenv.Settings(os.Environ(), withheld), WithheldGit: childenv.WithheldGit(os.Environ()),
			SessionEnv: p.sessionEnv, Editor: opts.Editor, Seen: seen,
		}})
	if err != nil {
		return fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return nil
}

// wireHooks says what loading the hooks found and makes the session's
// hooks.Set, and the definitions' Sets as agents first follow them.
func (p *Project) wireHooks(opts Options, cfg config.Config, loaded sessionhooks.Loaded, src sessionhooks.Sources) {
	b := sessionhooks.Builder{Root: p.Root, Person: p.Person, Approval: p.Approval, Notify: p.notify, EnvFile: p.envFile,
		Env: func() []string { return childenv.ForCommands(os.Environ(), p.Config.ShellEnv, p.Config.APIKeyEnv) }}
	b.Say(loaded)
	p.Hooks = b.Set(loaded, src, p.Tools.Workspace())
	if p.Hooks != nil {
		// Hooks written for Claude Code read its permission mode and its
		// JSONL transcript (transcript_path): a session with hooks keeps
		// one beside its own records (docs/hooks.md).
		p.Hooks.PermissionMode = hooks.PermissionMode(cfg.Sandbox == string(sandbox.ReadOnly), opts.Yes, opts.NeverAsk)
		p.Session.KeepHookTranscript(p.Root)
	}
	p.agentHooks = &sessionhooks.AgentSets{Make: func(agent string) *hooks.Set {
		set := b.SetOf(loaded, src, p.Tools.Workspace(), agent)
		if set != nil && p.Hooks != nil {
			set.PermissionMode = p.Hooks.PermissionMode
		}
		return set
	}}
}

// SettingsDoor is the door of a project no session is open in (`ralph
// undo` of an earlier session): the kept list and the settings files'
// Read(…) deny rules, read as a session reads them. The checkpoint such
// an undo takes first leaves out what it refuses, as a session's
// checkpoints do: a later session's commands may read refs/ralph/.
func SettingsDoor(fs afero.Fs, root string) *kept.Door {
	home, _ := os.UserHomeDir()
	door := kept.New(kept.Options{Root: root, Kept: projectroot.Kept(), Home: home})
	door.Deny(sessionhooks.Load(sessionhooks.SourcesOf(root, fs, fs, config.Config{}, nil)).ReadRules...)
	return door
}
