package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Every setting of a session is a row of one table here: its flag, its
// config key, how `ralph config` shows it, how the flag's value is put
// over the configuration a session opens with, whether the session
// saves it, and how it travels when `ralph run --engine temporal` runs
// the loop on other machines. The task loop's own flags are rows of the
// same kind (runFlags), and so are the engine's (engineFlags). A test
// walks every flag of ralph, ralph run and ralph chat and fails for one
// without a row saying where it goes.

// travel is where a flag goes when the task loop runs on Temporal.
type travel int

const (
	// travelUnset is a row that says nothing: the walk test refuses it.
	travelUnset travel = iota
	// carried goes to every worker with the run (remote.Start), which
	// takes it only where it tightens its own configuration
	// (remote.Session.Tighten).
	carried
	// here is taken by the ralph that starts the run: how it shows the
	// run, which project, how it reaches Temporal.
	here
	// refused stops ralph run --engine temporal with the row's sentence
	// and exit 2, before anything starts.
	refused
)

// sessionSetting is one row of the session's settings.
type sessionSetting struct {
	// flag is the flag's long name; "" for a config key no flag sets.
	flag string
	// key is the config key `ralph config` lists it under; "" for a flag
	// no config key holds. env is the variable that sets it, if any.
	key, env string
	// saved: the session records it, and a resumed session keeps it
	// unless the flag is given again (project.Overrides.Saved); given
	// says the flag was.
	saved bool
	given func(f *flags) bool
	// temporal is how the flag travels; why the sentence a refused one
	// is refused with, or what a here one does there.
	temporal travel
	why      string
	// show is its value in `ralph config`; nil leaves it out there.
	show func(effective) any
	// source says where the value came from when it is not the usual
	// flag, variable, file or default (the API key: its variable).
	source func(effective) string
	// apply puts the flag's value, when given, over cfg.
	apply func(f *flags, cfg *config.Config)
	// carry writes the flag's value, when given, into the run a worker
	// gets; an error is the sentence it is refused with.
	carry func(f *flags, s *remote.Session) error
}

// conversationOnly is the sentence for a flag of a conversation, which
// no task loop takes.
func conversationOnly(flag, does string) string {
	return "--engine temporal does not take " + flag + ": it " + does + ", and a run on Temporal holds none"
}

// sessionSettings are the session's rows, in the order `ralph config`
// lists them.
func sessionSettings() []sessionSetting {
	type s = sessionSetting
	type c = config.Config
	show := func(get func(c) any) func(effective) any {
		return func(e effective) any { return get(e.Cfg) }
	}
	return []s{
		{flag: config.ModelSetting.Flag, key: config.ModelSetting.Key, env: config.ModelSetting.Env, saved: true, given: func(f *flags) bool { return f.model != "" }, temporal: carried,
			show:  show(func(c c) any { return c.Model }),
			apply: func(f *flags, cfg *c) { cfg.Apply(config.ModelSetting, f.model, config.FromFlag) },
			carry: func(f *flags, s *remote.Session) error { s.Model = f.model; return nil }},
		{flag: config.BaseURLSetting.Flag, key: config.BaseURLSetting.Key, env: config.BaseURLSetting.Env, temporal: carried,
			why:   "a worker takes it only when its own config allows the endpoint ([engine] allow_base_urls)",
			show:  show(func(c c) any { return c.BaseURL }),
			apply: func(f *flags, cfg *c) { cfg.Apply(config.BaseURLSetting, f.baseURL, config.FromFlag) },
			carry: func(f *flags, s *remote.Session) error { s.BaseURL = f.baseURL; return nil }},
		{flag: config.ProviderSetting.Flag, key: config.ProviderSetting.Key, env: config.ProviderSetting.Env, temporal: carried,
			why:    "a worker takes it only where its own config names no endpoint of its own, and calls that provider with the key in its own environment",
			show:   show(func(c c) any { return c.Provider }),
			source: func(e effective) string { return e.Cfg.ProviderWhy },
			apply:  func(f *flags, cfg *c) { cfg.Apply(config.ProviderSetting, f.provider, config.FromFlag) },
			carry:  func(f *flags, s *remote.Session) error { s.Provider = strings.ToLower(f.provider); return nil }},
		{key: "wire", show: show(func(c c) any {
			if c.Wire == "" {
				return providers.WireAuto
			}
			return c.Wire
		})},
		{key: "tool_family", show: show(func(c c) any {
			if c.ToolFamily == "" {
				return "auto (" + providers.FamilyOf(c.Model).Name() + " for " + c.Model + ")"
			}
			return c.ToolFamily
		})},
		{flag: "thinking-tokens", key: "thinking_tokens", env: "MAX_THINKING_TOKENS", temporal: carried,
			why:   "a worker takes it only when it is no higher than its own budget, if it has one",
			show:  show(func(c c) any { return c.ThinkingTokens }),
			apply: func(f *flags, cfg *c) { set(&cfg.ThinkingTokens, f.thinkingTokens) },
			carry: func(f *flags, s *remote.Session) error { s.ThinkingTokens = f.thinkingTokens; return nil }},
		{key: "api_key", show: func(e effective) any {
			if e.Cfg.KeyWithheld {
				return "withheld: the project's base_url is not yours, so it gets no key"
			}
			if e.Cfg.APIKey == "" {
				return "not set"
			}
			return "set"
		}, source: keyVariable},
		{flag: "max-turns", key: "max_turns", temporal: carried,
			show:  show(func(c c) any { return c.MaxTurns }),
			apply: func(f *flags, cfg *c) { set(&cfg.MaxTurns, f.maxTurns) },
			carry: func(f *flags, s *remote.Session) error { s.MaxTurns = f.maxTurns; return nil }},
		{flag: "max-retries", key: "max_retries", temporal: carried,
			show: show(func(c c) any { return c.MaxRetries }),
			apply: func(f *flags, cfg *c) {
				if f.maxRetries >= 0 {
					cfg.MaxRetries = f.maxRetries
				}
			},
			carry: func(f *flags, s *remote.Session) error {
				if f.maxRetries >= 0 {
					n := f.maxRetries
					s.MaxRetries = &n
				}
				return nil
			}},
		{flag: "command-timeout", key: "command_timeout_s", temporal: carried,
			show:  show(func(c c) any { return int(c.CommandTimeout / time.Second) }),
			apply: func(f *flags, cfg *c) { set(&cfg.CommandTimeout, time.Duration(f.commandTimeout)*time.Second) },
			carry: func(f *flags, s *remote.Session) error {
				s.CommandTimeout = time.Duration(f.commandTimeout) * time.Second
				return nil
			}},
		{flag: "idle-timeout", key: "stream_idle_timeout", temporal: carried,
			show:  show(func(c c) any { return c.IdleTimeout.String() }),
			apply: func(f *flags, cfg *c) { set(&cfg.IdleTimeout, f.idleTimeout) },
			carry: func(f *flags, s *remote.Session) error { s.IdleTimeout = f.idleTimeout; return nil }},
		{key: "context_tokens", show: show(func(c c) any { return c.ContextTokens })},
		{flag: "max-output-tokens", key: "max_output_tokens", temporal: carried,
			show:  show(func(c c) any { return c.MaxOutputTokens }),
			apply: func(f *flags, cfg *c) { set(&cfg.MaxOutputTokens, f.maxOutput) },
			carry: func(f *flags, s *remote.Session) error { s.MaxOutputTokens = f.maxOutput; return nil }},
		{key: "input_price_per_mtok", show: show(func(c c) any { return c.InputPrice })},
		{key: "output_price_per_mtok", show: show(func(c c) any { return c.OutputPrice })},
		{key: "checkpoint_max_file_mb", show: show(func(c c) any { return c.CheckpointMaxFileMB })},
		{flag: "sandbox", key: "sandbox", temporal: carried,
			why: "a worker takes it only when it is as strict as its own sandbox or stricter",
			show: show(func(c c) any {
				if c.Sandbox == "" {
					return config.DefaultSandbox
				}
				return c.Sandbox
			}),
			apply: func(f *flags, cfg *c) { set(&cfg.Sandbox, f.sandbox) },
			carry: func(f *flags, s *remote.Session) error {
				if f.sandbox == string(sandbox.FullAccess) {
					return fmt.Errorf("--engine temporal does not carry --sandbox %s: a run's settings may only tighten a worker's sandbox; running outside it is for the worker's own config", f.sandbox)
				}
				s.Sandbox = f.sandbox
				return nil
			}},
		{flag: "no-network", key: "network", temporal: carried,
			show: show(func(c c) any { return c.Network }),
			apply: func(f *flags, cfg *c) {
				if f.noNetwork {
					cfg.Network = false
				}
			},
			carry: func(f *flags, s *remote.Session) error { s.NoNetwork = f.noNetwork; return nil }},
		{key: "sandbox_writable", show: show(func(c c) any { return nonNil(c.SandboxWritable) })},
		{key: "sandbox_unix_sockets", show: show(func(c c) any { return nonNil(c.SandboxUnixSockets) })},
		{key: "sandbox_readable", show: show(func(c c) any { return nonNil(c.SandboxReadable) })},
		{key: "web_fetch_allow", show: show(func(c c) any { return nonNil(c.WebFetchAllow) })},
		{key: "web_fetch_allow_private", show: show(func(c c) any { return c.WebFetchAllowPrivate })},
		{flag: "web-search", key: "web_search", temporal: refused,
			why:  "--engine temporal does not carry --web-search: a worker's model searches the web only when its own config says web_search = true",
			show: show(func(c c) any { return c.WebSearch }),
			apply: func(f *flags, cfg *c) {
				if f.webSearch {
					cfg.WebSearch = true
				}
			}},
		{key: "shell_env", show: show(func(c c) any { return nonNil(c.ShellEnv) })},
		{key: "allowed_commands", show: show(func(c c) any {
			return nonNil(append(slices.Clone(c.AllowedCommands), c.ProjectAllowedCommands...))
		})},
		{key: "ask_before", show: show(func(c c) any { return nonNil(c.AskBefore) })},
		{flag: "style", key: "style", temporal: here,
			show:  show(func(c c) any { return c.Style }),
			apply: func(f *flags, cfg *c) { set(&cfg.Style, f.style) }},
		{key: "max_retry_after", show: show(func(c c) any { return c.MaxRetryAfter.String() })},
		{flag: "max-wait", key: "max_wait", temporal: carried,
			show: show(func(c c) any { return c.MaxWait.String() }),
			apply: func(f *flags, cfg *c) {
				if f.maxWaitSet {
					cfg.MaxWait = f.maxWait
				}
			}},
		// On Temporal a worker still refuses at once what needs a
		// person; the answer timeout is how long the workflow waits for
		// the answer to the loop's own question (remote.Start.AskTimeout).
		{flag: "answer-timeout", key: "answer_timeout", temporal: carried,
			show: show(func(c c) any { return c.AnswerTimeout.String() }),
			apply: func(f *flags, cfg *c) {
				if f.answers.Timeout != nil {
					cfg.AnswerTimeout = *f.answers.Timeout
				}
			}},
		{key: "notify_command", show: show(func(c c) any { return c.NotifyCommand })},
		{key: "retention", show: show(func(c c) any {
			return map[string]any{"keep": c.Retention.Keep, "older_than": c.Retention.OlderThan.String()}
		})},
		{key: "engine", show: show(func(c c) any {
			return map[string]any{"name": c.Engine.Name, "address": c.Engine.Address, "namespace": c.Engine.Namespace,
				"task_queue": c.Engine.TaskQueue, "tls": c.Engine.TLS, "allow_base_urls": nonNil(c.Engine.AllowBaseURLs)}
		})},
		{key: "prompt_template", show: show(func(c c) any { return c.PromptTemplate })},
		{key: "plans_dir", show: show(func(c c) any { return c.PlansDir })},
		{key: "review", show: show(func(c c) any { return c.Review })},
		{key: "agents", show: show(func(c c) any {
			if c.Agents == nil {
				return map[string]config.Agent{}
			}
			return c.Agents
		})},
		{key: "claude_hooks", show: show(func(c c) any { return !c.NoAgentSettingsHooks })},
		{key: "hooks", show: show(func(c c) any {
			// The config files' own hooks, as "EVENT: command"; ralph hooks
			// lists every source's, with whether each runs.
			var out []string
			for _, t := range []config.HookTables{c.UserHooks, c.ProjectHooks} {
				for ev, groups := range t.Events {
					for _, g := range groups {
						for _, h := range g.Hooks {
							out = append(out, ev+": "+h.Command)
						}
					}
				}
			}
			slices.Sort(out)
			return nonNil(out)
		})},
		{key: "mcp_servers", show: show(func(c c) any {
			var names []string
			for _, s := range c.MCPServers {
				names = append(names, s.Name)
			}
			return nonNil(names)
		})},

		// The flags no config key holds.
		{flag: "yes", temporal: carried, why: "without -y a worker, where nobody can be asked, refuses every command no approval rule allows",
			carry: func(f *flags, s *remote.Session) error { s.Yes = f.yes; return nil }},
		{flag: "permission-mode", temporal: carried, why: "it travels as the --sandbox and -y it settles into"},
		{flag: "dangerously-skip-permissions", temporal: refused,
			why: "--engine temporal does not carry --dangerously-skip-permissions: a run's settings may only tighten a worker's sandbox"},
		{flag: "disallowed-tools", temporal: carried,
			carry: func(f *flags, s *remote.Session) error { s.DisallowedTools = f.conv.disallowed; return nil }},
		{flag: "disallowedTools", temporal: carried, why: "Claude Code's spelling of --disallowed-tools"},
		{flag: "allowed-tools", temporal: refused,
			why: "--engine temporal does not carry --allowed-tools: a run's settings may only tighten what a worker allows; its own allowed_commands decide"},
		{flag: "allowedTools", temporal: refused,
			why: "--engine temporal does not carry --allowedTools: a run's settings may only tighten what a worker allows; its own allowed_commands decide"},
		{flag: "add-dir", temporal: refused,
			why: "--engine temporal does not carry --add-dir: a directory of this machine means nothing on a worker, and one of the worker's would loosen its sandbox"},
		{flag: projectroot.AllowHomeFlag, temporal: refused,
			why: "--engine temporal does not carry --" + projectroot.AllowHomeFlag + ": it would give a worker's model a directory holding the person's own files"},
		{flag: "append-system-prompt", temporal: carried,
			carry: func(f *flags, s *remote.Session) error { s.AppendSystem = f.conv.appendSystem; return nil }},
		{flag: "force", temporal: refused, why: "--engine temporal does not carry --force: it takes over a project's lock, and a run on Temporal takes none"},
		{flag: "no-wait", temporal: here, why: "a worker never waits for ralph answer; without a terminal the workflow asks nothing then"},
		// The workflow asks the loop's questions and waits for ralph
		// answer (remote.Start.Ask); a worker still asks nobody.
		{flag: "wait-for-answers", temporal: carried},
		{flag: "dir", temporal: here, why: "the project the run is started from"},
		{flag: "no-color", temporal: here},
		{flag: "output-format", temporal: here},
		{flag: "json", temporal: here},
		{flag: "stream-shape", temporal: here, why: "the one-shot's lines, as this ralph prints them"},
		{flag: "input-format", temporal: here, why: "how the one-shot reads its task, from this ralph's standard input"},
		{flag: "max-thinking-tokens", temporal: carried, why: "Claude Code's spelling of --thinking-tokens"},
		{flag: "allow-dangerously-skip-permissions", temporal: here, why: "Claude Code's leave to choose bypassPermissions, which changes nothing in ralph"},
		{flag: "verbose", temporal: here},
		{flag: "serve", temporal: here, why: "serves the run's page from the ralph that follows it"},
		{flag: "tracker", temporal: here, why: "it names the plan, which the loop on Temporal refuses unless it is the branch's RALPH_TASKS.md"},
		{flag: "epic", temporal: here, why: "it names the plan, which the loop on Temporal refuses unless it is the branch's RALPH_TASKS.md"},
		{flag: "continue", temporal: refused, why: conversationOnly("-c", "continues a conversation")},
		{flag: "session", temporal: refused, why: conversationOnly("--session", "continues a conversation")},
		{flag: "resume", temporal: refused, why: conversationOnly("--resume", "continues a conversation")},
		{flag: "fork-session", temporal: refused, why: conversationOnly("--fork-session", "copies a conversation")},
		{flag: "print", temporal: refused, why: conversationOnly("-p", "prints a one-shot's answer")},
		{flag: outputSchemaFlag, temporal: refused, why: conversationOnly("--"+outputSchemaFlag, "shapes a one-shot's final answer")},
		{flag: jsonSchemaFlag, temporal: refused, why: conversationOnly("--"+jsonSchemaFlag, "shapes a one-shot's final answer")},
		{flag: "fallback-model", key: "fallback_models", temporal: refused,
			why:   "--engine temporal does not carry --fallback-model: a fallback model may need another provider's key, which a worker must hold in its own environment; set fallback_models in the worker's own config",
			show:  show(func(c c) any { return nonNil(c.FallbackNames()) }),
			apply: func(f *flags, cfg *c) { cfg.SetFallbackModels(f.fallbackModels) }},
		{key: "fallback_on_limit", show: show(func(c c) any { return c.FallbackOnLimit })},
	}
}

// set puts v over *dst when v is given (not its type's zero).
func set[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// overrides are the flags that change the configuration a session runs
// with, as project.Open and `ralph config` take them: every row's apply.
func (f *flags) overrides() project.Overrides {
	rows := sessionSettings()
	var saved []string
	for _, r := range rows {
		if r.saved && r.given(f) {
			saved = append(saved, r.key)
		}
	}
	return project.Overrides{
		Saved: saved, AllowHome: f.allowHome,
		Apply: func(cfg *config.Config) error {
			for _, r := range rows {
				if r.apply != nil {
					r.apply(f, cfg)
				}
			}
			return nil
		},
	}
}

// temporalSession is what the session's flags carry to the workers of a
// run on Temporal, or the sentence why one of them cannot go: a flag
// given whose row refuses it, or a value its carry refuses. changed
// reports the flags given.
func (f *flags) temporalSession(changed func(string) bool) (remote.Session, error) {
	var s remote.Session
	for _, r := range sessionSettings() {
		if r.flag == "" || !changed(r.flag) {
			continue
		}
		if r.temporal == refused {
			return s, errors.New(r.why)
		}
	}
	for _, r := range sessionSettings() {
		if r.carry == nil {
			continue
		}
		if err := r.carry(f, &s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// refusedRunFlag is the sentence for a loop flag given that the loop on
// Temporal refuses, nil when none is.
func refusedRunFlag(changed func(string) bool) error {
	for _, s := range runFlags() {
		if s.temporal == refused && changed(s.name) {
			return errors.New(s.why)
		}
	}
	return nil
}

// configSource says where a setting's value came from: "flag --NAME",
// "env NAME", the config files that set it, or "default".
func (e effective) configSource(r sessionSetting, changed func(string) bool) string {
	switch {
	case r.source != nil:
		return r.source(e)
	case r.flag != "" && changed(r.flag):
		return "flag --" + r.flag
	case r.env != "" && os.Getenv(r.env) != "":
		return "env " + r.env
	}
	if f := e.setByAll(r.key); f != "" {
		return f
	}
	if p, ok := providers.Named(e.Cfg.Provider); ok && r.key == "base_url" && p.BaseURLEnv != "" && os.Getenv(p.BaseURLEnv) == e.Cfg.BaseURL {
		return "env " + p.BaseURLEnv
	}
	if (r.key == "model" || r.key == "base_url") && e.Cfg.Provider != "" {
		// The provider's own, which ProviderWhy on its row explains.
		return "default of " + e.Cfg.Provider
	}
	return "default"
}
