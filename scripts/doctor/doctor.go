// Package doctor is `ralph doctor`'s checks of a setup: the config files
// and the provider, the endpoint (one tiny request), the sandbox and the
// kernel, git, the agent CLIs, MCP servers, plugins and what a session
// finds of skills, commands and agent definitions; each check a line with
// its fix, and the report as text or JSON. The command line
// (scripts/cli) resolves the configuration and hands it in.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Statuses of a doctor check: a problem would stop a run.
const (
	StatusOK      = "ok"
	StatusWarning = "warning"
	StatusProblem = "problem"
)

// Check is one line of `ralph doctor`.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix is the one sentence that mends a warning or problem.
	Fix string `json:"fix,omitempty"`
}

// Report is what `ralph doctor --json` prints.
type Report struct {
	Version string       `json:"version"`
	Files   []ConfigFile `json:"config_files"`
	// Provider is the provider a run here would use ("" for an endpoint
	// known by its URL only), ProviderWhy the sentence why.
	Provider    string         `json:"provider,omitempty"`
	ProviderWhy string         `json:"provider_why,omitempty"`
	Model       string         `json:"model,omitempty"`
	BaseURL     string         `json:"base_url,omitempty"`
	KeySource   string         `json:"key_source,omitempty"`
	Sandbox     sandbox.Kernel `json:"sandbox_kernel"`
	Checks      []Check        `json:"checks"`
	// OK is false when a check found a problem that would stop a run.
	OK bool `json:"ok"`
}

// Setup is what the command line found of the configuration a session
// here would run with (its `ralph config`), which the checks read.
type Setup struct {
	// Version is ralph's own version.
	Version string
	// Root is the project's root, "" outside a project.
	Root string
	Cfg  config.Config
	// Files are the config files read, lowest precedence first.
	Files []ConfigFile
	// KeySource says where the API key comes from, never what it is.
	KeySource string
	// Plugins are the lines of the plugins added with ralph plugin add,
	// which the command line describes as `ralph plugin list` does.
	Plugins []Check
	// Err is the configuration's own error (a file that does not parse,
	// a setting refused); Root and Files are set as far as they were
	// found.
	Err error
}

// ConfigFile is one config file read, with the settings it sets.
type ConfigFile struct {
	Path string   `json:"path"`
	Keys []string `json:"keys"`
}

// KeysText lists a file's keys, or says it sets none.
func (f ConfigFile) KeysText() string {
	if len(f.Keys) == 0 {
		return "sets nothing"
	}
	return strings.Join(f.Keys, ", ")
}

// Run runs every check of `ralph doctor`.
func Run(ctx context.Context, e Setup) Report {
	r := Report{Version: fmt.Sprintf("%s (%s, %s/%s)", e.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH), OK: true}
	add := func(ch Check) {
		r.Checks = append(r.Checks, ch)
		if ch.Status == StatusProblem {
			r.OK = false
		}
	}
	r.Files = e.Files
	if r.Files == nil {
		r.Files = []ConfigFile{}
	}
	if err := e.Err; err != nil {
		add(Check{Name: "config", Status: StatusProblem, Detail: err.Error(), Fix: "mend the setting the sentence names, in the file it names"})
		// Without a configuration there is no mode to check; what the
		// kernel gives is still worth knowing.
		r.Sandbox = sandbox.ProbeKernel()
	} else {
		add(providerCheck(e.Cfg))
		add(Check{Name: "config", Status: StatusOK, Detail: text.Counted(len(e.Files), "config file", "config files") + " read"})
		r.Provider, r.ProviderWhy = e.Cfg.Provider, e.Cfg.ProviderWhy
		r.Model, r.BaseURL, r.KeySource = e.Cfg.Model, e.Cfg.BaseURL, e.KeySource
		for _, ch := range endpointChecks(ctx, e) {
			add(ch)
		}
		add(sandboxCheck(e.Cfg, &r.Sandbox))
		if e.Cfg.WebSearch {
			add(webSearchCheck(e.Cfg))
		}
		for _, ch := range mcpChecks(e) {
			add(ch)
		}
		for _, ch := range lspChecks(e.Cfg) {
			add(ch)
		}
	}
	add(gitCheck(ctx))
	for _, ch := range e.Plugins {
		add(ch)
	}
	if e.Root != "" {
		for _, ch := range sourceChecks(e.Root) {
			add(ch)
		}
	}
	for _, ch := range agentChecks(ctx) {
		add(ch)
	}
	// Whatever a server said back, the key is not shown, nor the masked
	// form some servers echo in a refusal.
	red := memory.NewRedactor(e.Cfg.Secrets()...)
	for i := range r.Checks {
		r.Checks[i].Detail = hideKeys(red.Redact(r.Checks[i].Detail))
	}
	return r
}

// maskedKey matches what servers echo of a key they refuse, whole or
// masked: OpenAI's, Anthropic's and OpenRouter's start "sk-" (OpenAI
// answers "Incorrect API key provided: sk-proj-****abcd"), Google's "AIza".
var maskedKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(sk-|AIza)[A-Za-z0-9_*.\-]{4,}`) })

func hideKeys(s string) string { return maskedKey().ReplaceAllString(s, "[key hidden]") }

// providerCheck says which provider a run here would use, the variable its
// key is read from (never the key) and why this provider, first of all:
// with several keys set, which one is used is the first thing to know.
func providerCheck(cfg config.Config) Check {
	name := cfg.Provider
	if name == "" {
		name = "the endpoint " + cfg.BaseURL
	}
	protocol := providers.ProtocolTitle(cfg.Protocol)
	if cfg.Protocol != providers.ProtocolAnthropic && providers.Wire(cfg.BaseURL, cfg.Model, cfg.Wire) == providers.WireResponses {
		// OpenAI's protocol speaks one of two APIs, by model (or wire).
		protocol = providers.ProtocolTitle(providers.ProtocolResponses) + " for " + cfg.Model
	}
	key := "key from " + cfg.APIKeyEnv
	if cfg.Bearer {
		key = "bearer token from " + cfg.APIKeyEnv
	}
	if cfg.APIKey == "" {
		key = cfg.APIKeyEnv + " not set"
	}
	return Check{Name: "provider", Status: StatusOK, Detail: fmt.Sprintf("%s (%s), %s: %s", name, protocol, key, cfg.ProviderWhy)}
}

// endpointChecks check the model, the key and the endpoint: whether it
// answers, lists the model, takes tools, and what context it serves.
func endpointChecks(ctx context.Context, e Setup) []Check {
	cfg := e.Cfg
	model := Check{Name: "model", Status: StatusOK, Detail: fmt.Sprintf("%s at %s, key from %s", cfg.Model, cfg.BaseURL, e.KeySource)}
	if u, err := url.Parse(cfg.BaseURL); err == nil && cfg.APIKey == "" && config.IsLocalURL(u) {
		model.Detail = fmt.Sprintf("%s at %s, a local endpoint that needs no key", cfg.Model, cfg.BaseURL)
	}
	if err := cfg.Validate(); err != nil {
		model.Status, model.Detail = StatusProblem, err.Error() // the sentence says what to set
		return []Check{model}
	}
	// Which tools the model is offered: its makers' where they trained it
	// on theirs (docs/tools.md).
	fam := providers.FamilyOf(cfg.Model)
	if f, ok := providers.FamilyNamed(cfg.ToolFamily); ok && cfg.ToolFamily != "" {
		fam = f
	}
	model.Detail += "; offered " + fam.Name() + "'s tools"
	out := []Check{model}
	client := models.Client(cfg)
	served, err := client.Models(ctx)
	if err != nil {
		return append(out, Check{Name: "endpoint", Status: StatusProblem, Detail: err.Error(), Fix: endpointFix(err, cfg)},
			Check{Name: "tools", Status: StatusWarning, Detail: "not checked: the endpoint did not answer", Fix: "mend the endpoint first"})
	}
	out = append(out, Check{Name: "endpoint", Status: StatusOK, Detail: fmt.Sprintf("%s answers and serves %s", cfg.BaseURL, text.Counted(len(served), "model", "models"))})
	window := 0
	listed := false
	for _, m := range served {
		if m.ID == cfg.Model {
			listed, window = true, m.ContextLength
		}
	}
	if listed {
		out = append(out, Check{Name: "model listed", Status: StatusOK, Detail: cfg.Model + " is among them"})
	} else {
		out = append(out, Check{Name: "model listed", Status: StatusWarning, Detail: fmt.Sprintf("%s is not among the models %s lists", cfg.Model, cfg.BaseURL),
			Fix: "pick one that ralph models lists, with --model, RALPH_MODEL or model in the config"})
	}
	if err := client.CheckTools(ctx, cfg.Model); err != nil {
		ch := Check{Name: "tools", Status: StatusProblem, Detail: err.Error()}
		if !llm.IsConfigError(err) {
			// A configuration error's sentence says what to change; any
			// other failure is the server's, which its log explains.
			ch.Fix = "run ralph doctor again; if it fails again, the server's log says why"
		}
		out = append(out, ch)
	} else {
		out = append(out, Check{Name: "tools", Status: StatusOK, Detail: cfg.Model + " accepts a request with a tool"})
	}
	if w := client.ServedWindow(ctx, cfg.Model); w > 0 {
		window = w
	}
	switch {
	case cfg.ContextTokens > 0:
		out = append(out, Check{Name: "context", Status: StatusOK, Detail: fmt.Sprintf("context_tokens = %d from the config", cfg.ContextTokens)})
	case window > 0:
		out = append(out, Check{Name: "context", Status: StatusOK, Detail: fmt.Sprintf("the endpoint serves %s with %d tokens of context", cfg.Model, window)})
	default:
		out = append(out, Check{Name: "context", Status: StatusOK, Detail: fmt.Sprintf("the endpoint does not say; ralph assumes %d tokens for %s (context_tokens in the config sets it)", llm.ContextWindow(cfg.Model), cfg.Model)})
	}
	return out
}

// endpointFix is the one sentence that mends an endpoint that failed.
func endpointFix(err error, cfg config.Config) string {
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Status {
		case 401, 403:
			return "export a valid key in " + cfg.APIKeyEnv + " (or set api_key_env in your user config, or name another provider with --provider)"
		case 404:
			return "point --base-url (or " + endpointVariable(cfg) + ") at the API's root, which usually ends in /v1"
		}
	}
	return "start the server, or point --base-url (or " + endpointVariable(cfg) + ") at one that runs"
}

// endpointVariable is the variable that moves cfg's endpoint, as the
// provider table names it: the provider's own (ANTHROPIC_BASE_URL), else
// OpenAI's, which ralph reads for any OpenAI-compatible endpoint.
func endpointVariable(cfg config.Config) string {
	if p, ok := providers.Named(cfg.Provider); ok && p.BaseURLEnv != "" {
		return p.BaseURLEnv
	}
	return providers.OpenAIBaseURLEnv
}

// sandboxCheck reports the sandbox mode and what this kernel gives it.
func sandboxCheck(cfg config.Config, k *sandbox.Kernel) Check {
	*k = sandbox.ProbeKernel()
	mode := cfg.Sandbox
	if mode == "" {
		mode = config.DefaultSandbox
	}
	network := "with the network"
	if !cfg.Network {
		network = "without the network"
	}
	switch {
	case mode == "danger-full-access":
		return Check{Name: "sandbox", Status: StatusWarning, Detail: "danger-full-access: the model's commands run unconfined",
			Fix: "use --sandbox workspace-write (the default) unless the machine is one you can lose"}
	case k.Weaker != "":
		return Check{Name: "sandbox", Status: StatusWarning, Detail: mode + " " + network + ", but " + k.Weaker, Fix: k.Fix}
	}
	detail := fmt.Sprintf("%s %s, by %s", mode, network, k.Mechanism)
	if k.LandlockABI > 0 {
		detail += fmt.Sprintf(" (Landlock ABI %d)", k.LandlockABI)
	}
	return Check{Name: "sandbox", Status: StatusOK, Detail: detail}
}

// webSearchCheck says whether the web_search the person asked for is
// offered, in the sentence a session says at its start when it is not.
func webSearchCheck(cfg config.Config) Check {
	if note := models.WebSearchNote(cfg); note != "" {
		return Check{Name: "web_search", Status: StatusWarning, Detail: note,
			Fix: "use an Anthropic model or an OpenAI search model with the network, or switch web_search off"}
	}
	return Check{Name: "web_search", Status: StatusOK, Detail: "the provider's own search, billed per search"}
}

// mcpChecks report each MCP server and whether it may start.
func mcpChecks(e Setup) []Check {
	var out []Check
	for _, w := range e.Cfg.MCPWarnings {
		out = append(out, Check{Name: "mcp", Status: StatusWarning, Detail: w, Fix: "mend the server's definition"})
	}
	for _, s := range e.Cfg.MCPServers {
		name := "mcp " + s.Name
		switch {
		case !s.Enabled:
			out = append(out, Check{Name: name, Status: StatusOK, Detail: "disabled in " + s.Source})
		case s.Err != "":
			out = append(out, Check{Name: name, Status: StatusWarning, Detail: s.Err, Fix: "set what it needs, or remove it with ralph mcp remove " + s.Name})
		case !s.FromProject:
			out = append(out, Check{Name: name, Status: StatusOK, Detail: "yours, from " + s.Source})
		case approval.ServerApproved(rootfs.Person(), config.UserConfigDir(), e.Root, s):
			out = append(out, Check{Name: name, Status: StatusOK, Detail: "the project's (" + s.Source + "), approved on this machine"})
		default:
			out = append(out, Check{Name: name, Status: StatusWarning, Detail: "the project's (" + s.Source + "), not approved on this machine, so it does not start",
				Fix: "read its definition with ralph mcp list, then ralph mcp approve " + s.Name})
		}
	}
	return out
}

// versionTimeout bounds asking a program its version.
const versionTimeout = 5 * time.Second

// programVersion is the first line `program --version` prints.
func programVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	// path is absolute, found off the project (childenv.Program); the
	// program runs as the person's others do, outside the project with
	// its directories off the search paths.
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stdin = nil
	cmd.Dir = workers.OutsideDir("")
	cmd.Env = childenv.PersonEnv(childenv.Scrub(os.Environ()))
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), nil
}

// gitCheck reports git's version.
func gitCheck(ctx context.Context) Check {
	path, err := childenv.Program("git")
	if errors.Is(err, childenv.ErrInProject) {
		return Check{Name: "git", Status: StatusProblem, Detail: err.Error() + ", so ralph runs no git in this project",
			Fix: "put the git you installed on PATH before the project's directories"}
	}
	if err != nil {
		return Check{Name: "git", Status: StatusWarning, Detail: "git is not installed, so there are no checkpoints, no ralph undo and no ralph run",
			Fix: "install git"}
	}
	v, err := programVersion(ctx, path)
	if err != nil {
		return Check{Name: "git", Status: StatusWarning, Detail: err.Error(), Fix: "reinstall git"}
	}
	return Check{Name: "git", Status: StatusOK, Detail: v}
}

// agentChecks report the agent CLIs ralph run --agent can use, asked
// their versions all at once: some take seconds to start.
func agentChecks(ctx context.Context) []Check {
	names := agents.Names()
	out := make([]Check, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { out[i] = agentCheck(ctx, name) })
	}
	wg.Wait()
	return out
}

// agentCheck reports one agent CLI: installed or not, and its version.
func agentCheck(ctx context.Context, name string) Check {
	ch := Check{Name: "agent " + name, Status: StatusOK}
	path, err := childenv.Program(name)
	if errors.Is(err, childenv.ErrInProject) {
		ch.Status, ch.Detail, ch.Fix = StatusWarning, err.Error()+", so ralph does not run it", "install "+name+" outside the project"
		return ch
	}
	if err != nil {
		ch.Detail = "not installed (needed only for ralph run --agent " + name + ")"
		return ch
	}
	if v, err := programVersion(ctx, path); err != nil {
		ch.Status, ch.Detail, ch.Fix = StatusWarning, err.Error(), "reinstall "+name+", or leave it out of ralph run --agent"
	} else {
		ch.Detail = v + " (" + path + ")"
	}
	return ch
}

// Write prints the report: a header, the config files, then one line per
// check; or the report as JSON.
func Write(w io.Writer, r Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(w, "ralph %s\n", r.Version)
	fmt.Fprintln(w, "Config files read, in order (later wins):")
	if len(r.Files) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, f := range r.Files {
		fmt.Fprintf(w, "  %s: %s\n", f.Path, f.KeysText())
	}
	for _, ch := range r.Checks {
		line := fmt.Sprintf("%-8s %s: %s", ch.Status, ch.Name, ch.Detail)
		if ch.Fix != "" {
			line += ". Fix: " + ch.Fix
		}
		fmt.Fprintln(w, line)
	}
	if r.OK {
		fmt.Fprintln(w, "A run can start.")
	} else {
		fmt.Fprintln(w, "A problem above would stop a run.")
	}
	return nil
}
