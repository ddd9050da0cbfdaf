package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// This file is what is particular to OpenCode (npm opencode-ai), run as
// `opencode run --format json` with the prompt on stdin. Sources: its
// documentation's pages on permissions (allow, ask, deny; the last
// matching rule of an object wins) and on its environment variables
// (OPENCODE_CONFIG_CONTENT: inline JSON applied over every config file,
// the project's opencode.json included), and its real output against the
// stand-in model, kept in testdata/agents/samples/opencode_*.jsonl: one
// JSON object a line, "step_start", "text" (a finished text part),
// "tool_use" (a finished tool part with its state), "step_finish" (the
// step's tokens and cost) and "error" (the session's error, such as an
// APIError with the provider's message); it exits 1 after an error and 0
// otherwise. Under `opencode run` a permission that would ask is refused
// at once ("permission requested: bash (…); auto-rejecting" on stderr, the
// tool part ends with status "error") and the run stops there; a tool the
// config denies outright is not offered to the model, whose call of it
// comes back as the "invalid" tool.

// AgentOpenCode is OpenCode.
const AgentOpenCode Kind = "opencode"

type opencodeCLI struct{}

func (opencodeCLI) kind() Kind { return AgentOpenCode }

func (opencodeCLI) args(extra []string) []string {
	return append([]string{"run", "--format", "json"}, extra...)
}

// keepEnv keeps OPENCODE_* and the variables its config names with
// {env:…}; its built-in providers read their usual key variables, which
// the person keeps with [agents.opencode] env.
func (opencodeCLI) keepEnv(env []string) []string {
	return append([]string{"OPENCODE_*"}, opencodeEnvKeys(env)...)
}

// configure gives opencode its permission as config, not arguments;
// through the environment, so that no file of ralph's lands in the
// project.
// configure also switches off the project's own opencode.json
// (OPENCODE_DISABLE_PROJECT_CONFIG): it is the model's to write, and can
// name MCP servers and plugins opencode would run outside any sandbox
// (workers/programs.go).
func (opencodeCLI) configure(p Policy, _ []string) ([]string, []string) {
	return nil, []string{opencodeSetEnv(p), "OPENCODE_DISABLE_PROJECT_CONFIG=1"}
}

func (opencodeCLI) writes(a Agent) string { return a.opencodeWrites() }

func (opencodeCLI) configModel(Agent) string { return "" }

func (opencodeCLI) parseLine(s *agentStream, b []byte) bool { return s.opencodeLine(b) }

func (opencodeCLI) denialHint(d Denial) string { return opencodeDenialHint(d) }

func (opencodeCLI) gets() string {
	return "opencode a permission config in OPENCODE_CONFIG_CONTENT (edits; commands only from allowed_commands, or all of them under -y --sandbox danger-full-access)"
}

func (opencodeCLI) reportsCost() bool { return true }

// mergeEnv keeps a config of the person's own in OPENCODE_CONFIG_CONTENT:
// ralph's permission goes into it unless it sets a permission itself,
// which then wins, as the person's arguments win over ralph's defaults.
// usageLimit: the CLI's limit messages are in the common words.
func (opencodeCLI) usageLimit(string, time.Time) (UsageLimit, bool) { return UsageLimit{}, false }

func (opencodeCLI) mergeEnv(name, own, ours string) string {
	if name != opencodeConfigVar {
		return ours
	}
	return mergeOpenCodeConfig(own, ours)
}

// opencodeConfigVar is the variable through which ralph gives opencode its
// permission config, so that ralph writes no opencode.json of its own into
// the person's project and a project's opencode.json cannot widen it.
const opencodeConfigVar = "OPENCODE_CONFIG_CONTENT"

// opencodePermission is opencode's "permission" config matched to ralph's
// sandbox and -y. opencode has no sandbox of its own, so a command it runs
// can reach anything the person's user can: ralph lets every command run
// only with -y under danger-full-access; otherwise only ralph's
// allowed_commands run, and any other command is asked for, which `opencode
// run` refuses. Edits are allowed unless the sandbox is read-only, where
// neither edits nor commands are.
func opencodePermission(p Policy) map[string]any {
	mode := sandboxMode(p)
	if mode == sandboxReadOnly {
		return map[string]any{"edit": "deny", "bash": "deny"}
	}
	if p.Yes && mode == sandboxFull {
		return map[string]any{"edit": "allow", "bash": "allow", "external_directory": "allow"}
	}
	bash := map[string]any{"*": "ask"}
	for _, r := range p.Allowed {
		if r = strings.Join(strings.Fields(r), " "); r != "" {
			bash[r], bash[r+" *"] = "allow", "allow"
		}
	}
	return map[string]any{"edit": "allow", "bash": bash}
}

// opencodeSetEnv is the variable Configure sets for opencode.
func opencodeSetEnv(p Policy) string {
	b, _ := json.Marshal(map[string]any{"permission": opencodePermission(p)})
	return opencodeConfigVar + "=" + string(b)
}

// mergeOpenCodeConfig puts ralph's permission into the person's inline
// config unless it has one; a config that is no JSON object is left for
// opencode to complain about.
func mergeOpenCodeConfig(own, ralph string) string {
	var o, r map[string]json.RawMessage
	if json.Unmarshal([]byte(own), &o) != nil || json.Unmarshal([]byte(ralph), &r) != nil {
		return own
	}
	if _, ok := o["permission"]; ok {
		return own
	}
	o["permission"] = r["permission"]
	b, err := json.Marshal(o)
	if err != nil {
		return own
	}
	return string(b)
}

// opencodeWrites says what opencode may change, from its permission as it
// will get it.
func (a Agent) opencodeWrites() string {
	if setsOption(a.Args, "--auto") {
		return "opencode runs with --auto: it may edit and run any command its permission config does not deny, without a sandbox"
	}
	env := a.Env
	if env == nil {
		env = os.Environ()
	}
	var cfg struct {
		Permission map[string]json.RawMessage `json:"permission"`
	}
	if json.Unmarshal([]byte(envValue(a.setEnv(env), opencodeConfigVar)), &cfg) != nil || cfg.Permission == nil {
		return "opencode runs with the permission config of your " + opencodeConfigVar
	}
	var edit, bash string
	_ = json.Unmarshal(cfg.Permission["edit"], &edit)
	_ = json.Unmarshal(cfg.Permission["bash"], &bash)
	switch {
	case edit == "deny":
		return `opencode runs with permission {"edit":"deny","bash":"deny"} (--sandbox read-only): it cannot change any file`
	case bash == "allow":
		return "opencode runs with every permission allowed (-y with --sandbox danger-full-access): it may edit and run any command, without a sandbox"
	}
	return "opencode runs with permission to edit files in the project and to run only the commands of allowed_commands; it has no sandbox, so other commands need -y with --sandbox danger-full-access"
}

// opencodeEnvRe finds the variables an opencode config reads, as in
// "apiKey": "{env:OPENROUTER_API_KEY}".
var opencodeEnvRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{env:([A-Za-z_][A-Za-z0-9_]*)\}`) })

// opencodeEnvKeys are the variables the person's own opencode config files
// name with {env:…}: a custom provider's key has any name. A project's
// opencode.json is not read: a cloned repository must not choose which of
// the person's secrets the agent gets.
func opencodeEnvKeys(env []string) []string {
	dir := envValue(env, "XDG_CONFIG_HOME")
	if dir == "" {
		if home := envValue(env, "HOME"); home != "" {
			dir = filepath.Join(home, ".config")
		}
	}
	var files []string
	if f := envValue(env, "OPENCODE_CONFIG"); f != "" {
		files = append(files, f)
	}
	if dir != "" {
		for _, n := range []string{"opencode.json", "opencode.jsonc", "config.json"} {
			files = append(files, filepath.Join(dir, "opencode", n))
		}
	}
	var keys []string
	for _, f := range files {
		data, err := rootfs.ReadSmall(rootfs.Person(), f, maxAgentConfig)
		if err != nil {
			continue
		}
		for _, m := range opencodeEnvRe().FindAllStringSubmatch(string(data), -1) {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// opencodeEvent is one line of opencode run --format json.
type opencodeEvent struct {
	Type  string        `json:"type"`
	Part  *opencodePart `json:"part"`
	Error *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

type opencodePart struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Tool  string `json:"tool"`
	State *struct {
		Status   string          `json:"status"` // of a finished tool: completed or error
		Input    json.RawMessage `json:"input"`
		Output   string          `json:"output"`
		Error    string          `json:"error"`
		Metadata struct {
			Exit *int `json:"exit"` // bash's exit status
		} `json:"metadata"`
	} `json:"state"`
	// Tokens are a step's: input excludes the prompt tokens read from or
	// written to the cache, which are added back so that InputTokens means
	// the whole prompt, and reasoning tokens are output.
	Tokens *struct {
		Input     int `json:"input"`
		Output    int `json:"output"`
		Reasoning int `json:"reasoning"`
		Cache     struct {
			Read  int `json:"read"`
			Write int `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Cost *float64 `json:"cost"`
}

// opencodeToolInput is the part of a tool's input ralph shows.
type opencodeToolInput struct {
	Command  string `json:"command"`
	FilePath string `json:"filePath"`
	Tool     string `json:"tool"`  // of the "invalid" tool: the tool the model called
	Error    string `json:"error"` // of the "invalid" tool: why
}

// opencodeLine handles an opencode event and reports whether b was one.
func (s *agentStream) opencodeLine(b []byte) bool {
	var ev opencodeEvent
	if json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return false
	}
	switch ev.Type {
	case "text":
		if ev.Part != nil {
			s.assistantText(ev.Part.Text)
		}
	case "tool_use":
		if ev.Part != nil && ev.Part.State != nil {
			s.opencodeTool(ev.Part)
		}
	case "step_finish":
		if p := ev.Part; p != nil && p.Tokens != nil {
			t := p.Tokens
			step := conversation.Usage{InputTokens: t.Input + t.Cache.Read + t.Cache.Write, OutputTokens: t.Output + t.Reasoning,
				CacheReadTokens: t.Cache.Read, CacheWriteTokens: t.Cache.Write}
			s.usage = s.usage.Add(step)
			s.send(Event{Kind: "usage", Usage: &step})
		}
		// opencode prices a step by its model's listed price, and says 0
		// for a model it has no price for: only a price it knew is a cost.
		if p := ev.Part; p != nil && p.Cost != nil && *p.Cost > 0 {
			c := *p.Cost
			if s.cost != nil {
				c += *s.cost
			}
			s.cost = &c
		}
	case "error":
		msg := "the session failed"
		if e := ev.Error; e != nil {
			switch {
			case strings.TrimSpace(e.Data.Message) != "":
				msg = e.Data.Message
			case strings.TrimSpace(e.Message) != "":
				msg = e.Message
			case e.Name != "":
				msg = e.Name
			}
		}
		s.noteLimit(msg)
		s.agentErr = msg
		s.send(Event{Kind: "error", Text: capEventText(msg)})
	}
	return true // step_start, reasoning and future events carry nothing ralph uses
}

// opencodeTool reports a finished tool call and notes what it says for the
// verdict: a call its permissions refused, or the last shell command.
func (s *agentStream) opencodeTool(p *opencodePart) {
	var in opencodeToolInput
	_ = json.Unmarshal(p.State.Input, &in)
	switch {
	case p.Tool == "invalid" && strings.Contains(in.Error, "unavailable tool"):
		// A tool the permission config denies is not offered; the model's
		// call of it is answered as the invalid tool.
		s.denials = append(s.denials, Denial{Tool: in.Tool})
	case p.State.Status == "error" && opencodeRefused(p.State.Error):
		s.denials = append(s.denials, Denial{Tool: p.Tool, Input: denialInput(p.State.Input)})
	case p.Tool == "bash":
		failed := p.State.Status == "error" || (p.State.Metadata.Exit != nil && *p.State.Metadata.Exit != 0)
		out := p.State.Output
		if p.State.Status == "error" {
			out = p.State.Error
		}
		s.lastCmd = &AgentCommand{Command: in.Command, ExitCode: p.State.Metadata.Exit, Failed: failed, Output: firstLine(out)}
	}
	args := string(p.State.Input)
	switch {
	case in.Command != "":
		args = in.Command
	case in.FilePath != "":
		args = in.FilePath
	}
	s.send(Event{Kind: "tool", Text: toolSummary(p.Tool, args)})
}

// opencodeRefused reports whether a tool's error is its permission
// refusing it: a question `opencode run` answered no, or a deny rule.
func opencodeRefused(err string) bool {
	return strings.Contains(err, "rejected permission") || strings.Contains(err, "rule which prevents")
}

// opencodeDenialHint says how to allow a refused call, in ralph's terms,
// since ralph's settings decide opencode's permission.
func opencodeDenialHint(d Denial) string {
	switch d.Tool {
	case "bash":
		rule := "the command"
		if w := strings.Fields(d.Input); len(w) > 0 {
			rule = w[0]
		}
		return "opencode runs only the commands of ralph's allowed_commands unless ralph runs with -y and --sandbox danger-full-access (opencode has no sandbox); allow " + rule + " in allowed_commands, or pass --agent-arg=--auto"
	case "edit", "write", "patch", "multiedit":
		return "ralph denies opencode's edits only under --sandbox read-only; check the permission in your " + opencodeConfigVar
	}
	return "`opencode run` refuses every permission it would ask for; allow it in the permission of your " + opencodeConfigVar + ", or pass --agent-arg=--auto"
}

// logins: opencode's auth.json in its data directory, the providers'
// keys and OAuth tokens.
func (opencodeCLI) logins() []sandbox.HiddenPath {
	return []sandbox.HiddenPath{{Home: ".local/share/opencode/auth.json", Env: "XDG_DATA_HOME", Under: "opencode/auth.json"}}
}

// projectSettings: none; OPENCODE_DISABLE_PROJECT_CONFIG (configure)
// keeps the project's opencode.json out.
func (opencodeCLI) projectSettings() []string { return nil }

func (opencodeCLI) promptDirs() []sandbox.HiddenPath { return nil }

func (opencodeCLI) skillDirs() []string { return nil }

func (opencodeCLI) hookSettings() (HookSettings, bool) { return HookSettings{}, false }

func (opencodeCLI) definitionDirs() []string { return nil }

func (opencodeCLI) commandDirs() []string { return nil }

func (opencodeCLI) pluginManifest() string { return "" }

func (opencodeCLI) officialMarket() string { return "" }

func (opencodeCLI) pluginSettings() string { return "" }
