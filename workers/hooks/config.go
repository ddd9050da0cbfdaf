// Package hooks runs Claude Code's hooks as Claude Code runs them: the
// settings' "hooks" object (config.go), its matchers (match.go), the JSON
// each event sends on standard input (input.go), the run itself (run.go)
// and what the hooks answered, combined (outcome.go). Which settings files
// are read, and whether a project's hooks were approved, is the caller's
// business: this package takes bytes and a source and starts what it is
// given, through workers.HookCommand.
package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Event is one of Claude Code's hook events.
type Event string

// The events ralph runs hooks for.
const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SubagentStop       Event = "SubagentStop"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	PreCompact         Event = "PreCompact"
	Notification       Event = "Notification"
	PermissionRequest  Event = "PermissionRequest"
	PermissionDenied   Event = "PermissionDenied"
	SubagentStart      Event = "SubagentStart"
	StopFailure        Event = "StopFailure"
	PostCompact        Event = "PostCompact"
	InstructionsLoaded Event = "InstructionsLoaded"
)

// Events lists the events ralph runs, in the order Claude Code documents
// them.
var Events = []Event{PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied,
	UserPromptSubmit, Stop, StopFailure, SubagentStart, SubagentStop, SessionStart, SessionEnd,
	PreCompact, PostCompact, Notification, InstructionsLoaded}

// ToolEvents are the events of one tool call: their matcher is the tool's
// name, their "if" is read, and they wait for the project's pending hooks
// to be decided, since a guard must be decided before the call it guards.
var ToolEvents = []Event{PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied}

// Source says which file a hook came from; the caller decides from it
// whether the hook may run (a project's need the person's approval).
type Source string

// The sources of hooks.
const (
	SourceUser         Source = "user"          // ~/.claude/settings.json or ralph's user config
	SourceProject      Source = "project"       // .claude/settings.json
	SourceProjectLocal Source = "project-local" // .claude/settings.local.json
	SourcePlugin       Source = "plugin"        // a plugin's hooks/hooks.json
)

// DefaultTimeout is how long a hook may run when its settings give no
// timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Hook is one command hook, with where it came from.
type Hook struct {
	Event Event
	// Matcher is the group's matcher as written ("" matches everything).
	Matcher string
	Command string
	Timeout time.Duration
	Source  Source
	// File is the settings file the hook came from, for messages.
	File string
	// PluginRoot is the plugin's directory (SourcePlugin only), given to
	// the hook as CLAUDE_PLUGIN_ROOT.
	PluginRoot string
	// Unsandboxed: the person's own config says sandbox = false for this
	// hook, so it runs outside the sandbox (only SourceUser hooks may).
	Unsandboxed bool
	// If is the hook's "if" condition in permission-rule syntax
	// ("Bash(git commit:*)"), read only on the tool events (ifEvents).
	If string
	// Async: the hook runs without holding the turn, and what it answers
	// is not read. A PreToolUse guard is never async.
	Async bool
	// Rewake (asyncRewake, which implies Async): when the hook exits 2,
	// its stderr (or stdout) reaches the model at its next turn, after
	// RewakeMessage, or Claude Code's words when that is empty;
	// RewakeSummary is the line the person sees then.
	Rewake                       bool
	RewakeMessage, RewakeSummary string
	// Prompt is a prompt hook's question (type "prompt"), put to a model
	// instead of running a command, and Model the model it names ("" for
	// the session's). Command is then PromptCommand's line, which names
	// the hook in messages and listings and in the approval a project's
	// hook waits for, so a changed question is a changed hook.
	Prompt, Model string
}

// IsPrompt reports whether h is a prompt hook, which no shell runs.
func (h Hook) IsPrompt() bool { return h.Prompt != "" }

// PromptCommand is the line that stands for a prompt hook where a
// command hook's command stands: "prompt: …", and the model it names.
func PromptCommand(prompt, model string) string {
	if model != "" {
		return "prompt (model " + model + "): " + prompt
	}
	return "prompt: " + prompt
}

// DefaultPromptTimeout is how long a prompt hook's request may take when
// its settings give no timeout, as in Claude Code.
const DefaultPromptTimeout = 30 * time.Second

// promptEvents are the events Claude Code runs prompt hooks on (and
// ralph has): those where an answer of ok or not decides something.
var promptEvents = map[Event]bool{PreToolUse: true, PostToolUse: true, PostToolUseFailure: true, PermissionRequest: true,
	UserPromptSubmit: true, Stop: true, SubagentStop: true}

// Config is the hooks of one or more settings files.
type Config struct {
	Hooks []Hook
	// Disabled is set when a settings file said "disableAllHooks": true:
	// then no hook runs.
	Disabled bool
	// Warnings are what was left out and why (a hook type or an event
	// ralph does not run, a bad matcher): the caller says each once.
	Warnings []string
}

// ErrSettings is wrapped by Parse's errors: the file is not settings JSON
// of the shape Claude Code reads.
var ErrSettings = errors.New("hooks: malformed settings")

type settingsFile struct {
	Hooks           map[string]json.RawMessage `json:"hooks"`
	DisableAllHooks bool                       `json:"disableAllHooks"`
}

type matcherGroup struct {
	Matcher string        `json:"matcher"`
	Hooks   []commandHook `json:"hooks"`
}

type commandHook struct {
	Type          string   `json:"type"`
	Command       string   `json:"command"`
	Prompt        string   `json:"prompt"`
	Model         string   `json:"model"`
	Timeout       *float64 `json:"timeout"`
	Sandbox       *bool    `json:"sandbox"`
	If            string   `json:"if"`
	Async         bool     `json:"async"`
	AsyncRewake   bool     `json:"asyncRewake"`
	RewakeMessage string   `json:"rewakeMessage"`
	RewakeSummary string   `json:"rewakeSummary"`
}

// ifEvents are the events whose hooks' "if" is read, as in Claude Code:
// those of one tool call. On the others "if" is ignored.
var ifEvents = map[Event]bool{PreToolUse: true, PostToolUse: true, PostToolUseFailure: true,
	PermissionRequest: true, PermissionDenied: true}

// Parse reads the hooks of one settings file (~/.claude/settings.json,
// .claude/settings.json, .claude/settings.local.json, a plugin's
// hooks/hooks.json: all have a top-level "hooks" object), keeping for each
// hook its source and file, and pluginRoot for a plugin's. Keys other than
// "hooks" and "disableAllHooks" are not read here. What ralph cannot run
// is a warning, not an error: a settings file written for Claude Code
// still gives ralph the hooks it can run.
func Parse(data []byte, src Source, file, pluginRoot string) (Config, error) {
	var cfg Config
	var s settingsFile
	if err := json.Unmarshal(data, &s); err != nil {
		return cfg, fmt.Errorf("%w: %s: %w", ErrSettings, file, err)
	}
	cfg.Disabled = s.DisableAllHooks
	// Go's maps have no order; the settings' events go in Events' order.
	names := make([]string, 0, len(s.Hooks))
	for name := range s.Hooks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(Events, Event(name)) {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: ralph runs no %s hooks; they are left out", file, name))
		}
	}
	for _, ev := range Events {
		raw, ok := s.Hooks[string(ev)]
		if !ok {
			continue
		}
		var groups []matcherGroup
		if err := json.Unmarshal(raw, &groups); err != nil {
			return Config{}, fmt.Errorf("%w: %s: hooks.%s: %w", ErrSettings, file, ev, err)
		}
		for _, g := range groups {
			if err := checkMatcher(g.Matcher); err != nil {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s matcher %q is no regular expression (%v); its hooks are left out", file, ev, g.Matcher, err))
				continue
			}
			for _, h := range g.Hooks {
				switch {
				case h.Type == "prompt" && !promptEvents[ev]:
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s hooks of type \"prompt\" are not run, as Claude Code runs prompt hooks only on PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, UserPromptSubmit, Stop and SubagentStop; it is left out", file, ev))
					continue
				case h.Type == "prompt" && strings.TrimSpace(h.Prompt) == "":
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: a %s prompt hook has no prompt; it is left out", file, ev))
					continue
				case h.Type == "prompt":
					cfg.Hooks = append(cfg.Hooks, promptHook(ev, g.Matcher, h, src, file, pluginRoot))
					continue
				case h.Type != "command":
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s hooks of type %q are not supported by ralph; only \"command\" and \"prompt\" hooks run", file, ev, h.Type))
					continue
				case h.Command == "":
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: a %s hook has no command; it is left out", file, ev))
					continue
				}
				timeout := hookTimeout(h.Timeout, DefaultTimeout)
				unsandboxed := h.Sandbox != nil && !*h.Sandbox
				if unsandboxed && src != SourceUser {
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: a %s hook says \"sandbox\": false, which only your own config may say; it runs in the sandbox", file, ev))
					unsandboxed = false
				}
				async := h.Async || h.AsyncRewake
				if async && ev == PreToolUse {
					// An async guard could not refuse the call it guards.
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: a PreToolUse hook says \"async\", but a guard never runs async in ralph: the call waits for it", file))
					async = false
				}
				cond := ""
				if ifEvents[ev] {
					cond = h.If
				}
				cfg.Hooks = append(cfg.Hooks, Hook{Event: ev, Matcher: g.Matcher, Command: h.Command,
					Timeout: timeout, Source: src, File: file, PluginRoot: pluginRoot, Unsandboxed: unsandboxed,
					If: cond, Async: async, Rewake: async && h.AsyncRewake, RewakeMessage: h.RewakeMessage, RewakeSummary: h.RewakeSummary})
			}
		}
	}
	return cfg, nil
}

// hookTimeout is a hook's timeout in seconds as its settings give it,
// or def.
func hookTimeout(seconds *float64, def time.Duration) time.Duration {
	if seconds != nil && *seconds > 0 {
		return time.Duration(*seconds * float64(time.Second))
	}
	return def
}

// promptHook is a prompt hook of the settings: never async (its answer
// is what it is for) and never outside the sandbox (it runs nothing);
// its "if" is read where a command hook's is.
func promptHook(ev Event, matcher string, h commandHook, src Source, file, pluginRoot string) Hook {
	cond := ""
	if ifEvents[ev] {
		cond = h.If
	}
	return Hook{Event: ev, Matcher: matcher, Command: PromptCommand(h.Prompt, h.Model), Prompt: h.Prompt, Model: h.Model,
		Timeout: hookTimeout(h.Timeout, DefaultPromptTimeout), Source: src, File: file, PluginRoot: pluginRoot, If: cond}
}

// Merge puts several files' hooks together, in the order given (the
// person's first, as Claude Code lists them): one file's disableAllHooks
// turns them all off, and the warnings are kept.
func Merge(cfgs ...Config) Config {
	var out Config
	for _, c := range cfgs {
		out.Hooks = append(out.Hooks, c.Hooks...)
		out.Disabled = out.Disabled || c.Disabled
		out.Warnings = append(out.Warnings, c.Warnings...)
	}
	return out
}

// For lists the hooks that run for event with the given match value (the
// tool's Claude name for the tool events, the source, reason, trigger or
// notification type for the others), in the configuration's order; none
// when the configuration is disabled.
func (c Config) For(event Event, value string) []Hook {
	if c.Disabled {
		return nil
	}
	var out []Hook
	for _, h := range c.Hooks {
		if h.Event == event && Matches(event, h.Matcher, value) {
			out = append(out, h)
		}
	}
	return out
}
