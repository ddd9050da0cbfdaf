package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// This file is what is particular to OpenAI's Codex CLI, run as codex exec
// --json - with the prompt on stdin. Sources: codex-rs/exec/src/
// exec_events.rs in github.com/openai/codex (ThreadEvent,
// ThreadItemDetails, Usage) and codex-rs/exec/src/cli.rs (a prompt of "-"
// is read from stdin).

// AgentCodex is OpenAI's Codex CLI.
const AgentCodex Kind = "codex"

type codexCLI struct{}

func (codexCLI) kind() Kind { return AgentCodex }

// args puts extra arguments before "-" so that options are never taken for
// part of the prompt.
func (codexCLI) args(extra []string) []string {
	return append(append([]string{"exec", "--json"}, extra...), "-")
}

// keepEnv keeps OPENAI_* and CODEX_*, and the variable a provider of
// codex's config reads its key from (its env_key), such as
// OPENROUTER_API_KEY.
func (codexCLI) keepEnv(env []string) []string {
	return append([]string{"OPENAI_*", "CODEX_*"}, codexEnvKeys(env)...)
}

func (codexCLI) configure(p Policy, user []string) ([]string, []string) {
	return codexDefaults(p, user), nil
}

func (codexCLI) writes(a Agent) string {
	if setsOption(a.Args, "--dangerously-bypass-approvals-and-sandbox", "--yolo") {
		return "codex runs without a sandbox (--dangerously-bypass-approvals-and-sandbox)"
	}
	mode, ok := optionValue(a.Args, "--sandbox", "-s")
	if !ok {
		return "codex runs with the sandbox_mode of its own config (read-only unless set)"
	}
	switch mode {
	case sandboxReadOnly:
		return "codex runs with --sandbox read-only: it cannot change any file"
	case sandboxWorkspace:
		return "codex runs with --sandbox workspace-write: it may write inside the project"
	}
	return "codex runs with --sandbox " + mode
}

// configModel is the model of codex's config, the chosen profile's when
// there is one.
func (codexCLI) configModel(a Agent) string {
	env := a.Env
	if env == nil {
		env = os.Environ()
	}
	c := readCodexConfig(env)
	profile := c.Profile
	if p, ok := optionValue(a.Args, "--profile", "-p"); ok {
		profile = p
	}
	if p, ok := c.Profiles[profile]; ok && p.Model != "" {
		return p.Model
	}
	return c.Model
}

func (codexCLI) parseLine(s *agentStream, b []byte) bool { return s.codexLine(b) }

// denialHint: codex's exec mode never asks and reports no refused call;
// what it may do is its sandbox's business.
func (codexCLI) denialHint(Denial) string {
	return "ralph gives codex --sandbox with ralph's own mode unless --agent-arg sets another; check its config's sandbox_mode"
}

func (codexCLI) gets() string {
	return "codex --sandbox <mode> and --skip-git-repo-check"
}

func (codexCLI) reportsCost() bool { return false }

// usageLimit: the CLI's limit messages are in the common words.
func (codexCLI) usageLimit(string, time.Time) (UsageLimit, bool) { return UsageLimit{}, false }

func (codexCLI) mergeEnv(_, _, ours string) string { return ours }

func codexDefaults(p Policy, user []string) []string {
	var def []string
	if !setsOption(user, "--skip-git-repo-check") {
		def = append(def, "--skip-git-repo-check")
	}
	if !setsOption(user, "--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo") &&
		!setsConfig(user, "sandbox_mode") {
		def = append(def, "--sandbox", sandboxMode(p))
	}
	return def
}

// codexConfig is the part of codex's config.toml ralph reads.
type codexConfig struct {
	Model     string `toml:"model"`
	Profile   string `toml:"profile"`
	Providers map[string]struct {
		EnvKey string `toml:"env_key"`
	} `toml:"model_providers"`
	Profiles map[string]struct {
		Model string `toml:"model"`
	} `toml:"profiles"`
}

// maxAgentConfig is how much of an agent CLI's own configuration file
// (codex's config.toml, opencode's JSON) ralph reads to learn which key
// variables it names: far more than any real one holds.
const maxAgentConfig = 1 << 20

// readCodexConfig reads $CODEX_HOME/config.toml, else ~/.codex/config.toml,
// as env has them. A missing or broken file reads as empty: codex itself
// says what is wrong with it.
//
// It is read by rootfs's small reader, as opencode's is: a FIFO or a
// file past maxAgentConfig is left out as a missing one is.
func readCodexConfig(env []string) codexConfig {
	var c codexConfig
	dir := envValue(env, "CODEX_HOME")
	if dir == "" {
		home := envValue(env, "HOME")
		if home == "" {
			return c
		}
		dir = filepath.Join(home, ".codex")
	}
	data, err := rootfs.ReadSmall(rootfs.Person(), filepath.Join(dir, "config.toml"), maxAgentConfig)
	if err != nil {
		return c
	}
	if _, err := toml.Decode(string(data), &c); err != nil {
		return codexConfig{}
	}
	return c
}

// codexEnvKeys are the variables codex's config names as its providers'
// keys (env_key): a custom provider's key has any name.
func codexEnvKeys(env []string) []string {
	var keys []string
	for _, p := range readCodexConfig(env).Providers {
		if k := strings.TrimSpace(p.EnvKey); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// codexEvent is one line of codex exec --json: thread.started,
// turn.started, item.started/updated/completed (item.type agent_message,
// reasoning, command_execution, file_change, mcp_tool_call, web_search,
// todo_list, error), turn.completed (usage), turn.failed and error. Older
// codex versions wrote {"id":…,"msg":{"type":"agent_message","message":…}};
// their agent messages are understood too.
type codexEvent struct {
	Type  string     `json:"type"`
	Item  *codexItem `json:"item"`
	Usage *struct {
		InputTokens       int `json:"input_tokens"` // includes cached_input_tokens
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
	Msg     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"msg"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"` // of a command: in_progress, completed, failed, declined
	Output   string `json:"aggregated_output"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server  string          `json:"server"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"arguments"`
	Query   string          `json:"query"`
	Message string          `json:"message"`
}

// codexLine handles a codex event and reports whether b was one.
func (s *agentStream) codexLine(b []byte) bool {
	var ev codexEvent
	if json.Unmarshal(b, &ev) != nil || (ev.Type == "" && ev.Msg == nil) {
		return false
	}
	switch ev.Type {
	case "item.started":
		if ev.Item != nil {
			s.codexTool(ev.Item)
		}
	case "item.completed":
		if ev.Item != nil {
			s.codexItemDone(ev.Item)
		}
	case "turn.completed":
		s.pendingErr = "" // whatever went wrong before, the turn recovered
		if u := ev.Usage; u != nil {
			turn := conversation.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CachedInputTokens}
			s.usage = s.usage.Add(turn)
			s.send(Event{Kind: "usage", Usage: &turn})
		}
	case "turn.failed":
		msg := s.pendingErr
		if ev.Error != nil && strings.TrimSpace(ev.Error.Message) != "" {
			msg = ev.Error.Message
		}
		if msg == "" {
			msg = "the turn failed"
		}
		s.noteLimit(msg)
		s.agentErr, s.pendingErr = msg, ""
		s.send(Event{Kind: "error", Text: capEventText(msg)})
	case "error":
		// codex also reports errors it recovers from (a stream it
		// reconnects) this way: the error is the run's only if no turn
		// completes after it.
		s.noteLimit(ev.Message)
		s.pendingErr = ev.Message
		s.send(Event{Kind: "warning", Text: capEventText(ev.Message)})
	case "":
		if ev.Msg.Type == "agent_message" {
			s.final, s.hasFinal = ev.Msg.Message, true
			s.assistantText(ev.Msg.Message)
		}
	}
	return true // thread.started, turn.started, item.updated and future events are not needed
}

// codexItemDone handles a finished item: agent messages are the answer;
// a tool that was not reported when it started is reported now.
func (s *agentStream) codexItemDone(it *codexItem) {
	switch it.Type {
	case "agent_message":
		s.final, s.hasFinal = it.Text, true
		s.assistantText(it.Text)
	case "error":
		// An error item is a notice that did not stop the turn, such as
		// "Model metadata for `x` not found"; fatal errors are events of
		// their own.
		s.noteLimit(it.Message)
		s.send(Event{Kind: "warning", Text: capEventText(it.Message)})
	case "command_execution":
		s.codexCommand(it)
		if !s.started[it.ID] || it.ID == "" {
			s.codexTool(it)
		}
	default:
		if !s.started[it.ID] || it.ID == "" {
			s.codexTool(it)
		}
	}
}

// codexTool reports an item that is a tool call, once.
func (s *agentStream) codexTool(it *codexItem) {
	var text string
	switch it.Type {
	case "command_execution":
		text = toolSummary("shell", it.Command)
	case "file_change":
		paths := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		text = toolSummary("edit", strings.Join(paths, ", "))
	case "mcp_tool_call":
		text = toolSummary(it.Server+"."+it.Tool, string(it.Args))
	case "web_search":
		text = toolSummary("web_search", it.Query)
	default:
		return // agent messages, reasoning and to-do lists are not tools
	}
	if it.ID != "" {
		s.started[it.ID] = true
	}
	s.send(Event{Kind: "tool", Text: text})
}

// codexCommand records a finished command as the last one.
func (s *agentStream) codexCommand(it *codexItem) {
	failed := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
	s.lastCmd = &AgentCommand{Command: unwrapShell(it.Command), ExitCode: it.ExitCode, Failed: failed, Output: firstLine(it.Output)}
}

// setsConfig reports whether args override key of codex's config with
// -c/--config key=value.
func setsConfig(args []string, key string) bool {
	for i, arg := range args {
		v := ""
		switch {
		case (arg == "-c" || arg == "--config") && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(arg, "--config="):
			v = arg[len("--config="):]
		default:
			continue
		}
		if k, _, ok := strings.Cut(v, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// logins: codex's auth.json in ~/.codex (or $CODEX_HOME), its ChatGPT
// login or API key.
func (codexCLI) logins() []sandbox.HiddenPath {
	return []sandbox.HiddenPath{{Home: ".codex/auth.json", Env: "CODEX_HOME", Under: "auth.json"}}
}

// projectSettings: none; codex reads a project's .codex/config.toml (and
// its hooks, which it asks about before they first run) only in a project
// the person marked trusted in their own ~/.codex/config.toml, which the
// model cannot write.
func (codexCLI) projectSettings() []string { return nil }

func (codexCLI) skillDirs() []string { return nil }

func (codexCLI) hookSettings() (HookSettings, bool) { return HookSettings{}, false }

func (codexCLI) definitionDirs() []string { return nil }

func (codexCLI) commandDirs() []string { return nil }

// promptDirs: codex's custom prompts, ~/.codex/prompts (or
// $CODEX_HOME/prompts), the person's only: codex reads no project's.
func (codexCLI) promptDirs() []sandbox.HiddenPath {
	return []sandbox.HiddenPath{{Home: ".codex/prompts", Env: "CODEX_HOME", Under: "prompts"}}
}

func (codexCLI) pluginManifest() string { return "" }

func (codexCLI) officialMarket() string { return "" }

func (codexCLI) pluginSettings() string { return "" }
