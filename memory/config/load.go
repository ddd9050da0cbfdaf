package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Load resolves defaults, files and environment. Flags are applied by the
// caller afterwards, then Validate is called.
//
// It goes in four steps, each a function below: the defaults
// (defaults); every config file, the person's then the project's, read
// and applied in turn (applyFiles, applyFile); the MCP servers of every
// source merged (mergeMCP); and the environment applied (applyEnv)
// before the provider is resolved. On an error the configuration so far
// is returned with it.
func Load(src Sources) (Config, error) {
	if src.Getenv == nil {
		src.Getenv = os.Getenv
	}
	if src.UserFs == nil {
		src.UserFs = src.Fs
	}
	c := defaults(src.Getenv)
	servers, err := c.applyFiles(src)
	if err != nil {
		return c, err
	}
	c.mergeMCP(src, servers)
	if err := c.applyEnv(src.Getenv); err != nil {
		return c, err
	}
	if err := c.Resolve(); err != nil {
		return c, err
	}
	// No process ralph starts for itself may inherit the model's key,
	// whatever the variable holding it is called (every provider's own
	// variables childenv hides by itself).
	childenv.Hide(c.APIKeyEnv)
	return c, nil
}

// defaults is the configuration before any file or variable has its say.
func defaults(getenv func(string) string) Config {
	c := Config{
		Model:          DefaultModel,
		BaseURL:        DefaultBaseURL,
		APIKeyEnv:      providers.Default().KeyEnv,
		MaxTurns:       DefaultMaxTurns,
		MaxRetries:     DefaultMaxRetries,
		CommandTimeout: DefaultCommandTimeout,
		IdleTimeout:    DefaultIdleTimeout,
		Sandbox:        DefaultSandbox,
		Network:        true,
		MaxRetryAfter:  DefaultMaxRetryAfter,
		MaxWait:        DefaultMaxWait,
		AnswerTimeout:  DefaultAnswerTimeout,
		src:            resolveState{getenv: getenv},
	}
	c.src.resolvedModel, c.src.resolvedBaseURL = c.Model, c.BaseURL
	return c
}

// fileServers are the MCP servers the config files name: the person's
// and the project's, kept apart until mergeMCP weighs them against the
// other sources.
type fileServers struct {
	user, project []MCPServer
}

// applyFiles reads the config files of src, lowest precedence first, and
// applies each that exists. The project's file is read through the
// project's door (src.Fs), the person's through theirs (src.UserFs).
func (c *Config) applyFiles(src Sources) (fileServers, error) {
	var servers fileServers
	paths := Paths(src.UserConfigDir, src.ProjectRoot)
	projectFile := ""
	if src.ProjectRoot != "" {
		projectFile = paths[len(paths)-1]
	}
	for _, p := range paths {
		fromProject := p == projectFile
		from := src.UserFs
		if fromProject {
			from = src.Fs
		}
		f, ok, err := readFile(from, p)
		if err != nil {
			return servers, err
		}
		if !ok {
			continue
		}
		c.Files = append(c.Files, p)
		if err := c.applyFile(f, p, fromProject); err != nil {
			return servers, err
		}
		// A project's servers never get the model's key in their
		// variables: a cloned repository wrote them.
		getenv := src.Getenv
		if fromProject {
			getenv = withoutModelKeys(getenv, c.APIKeyEnv)
		}
		s, err := mcpServers(f.MCPServers, p, fromProject, getenv)
		if err != nil {
			return servers, err
		}
		if fromProject {
			servers.project = s
		} else {
			servers.user = s
		}
	}
	return servers, nil
}

// applyFile applies the settings of one config file at path p over what
// the files before it said. fromProject says the file is the project's,
// which a cloned repository controls: each step refuses what only the
// person may set, and lets a project only tighten what it may touch.
func (c *Config) applyFile(f File, p string, fromProject bool) error {
	if err := c.applyEndpoint(f, p, fromProject); err != nil {
		return err
	}
	if err := c.applyModelChoice(f, p); err != nil {
		return err
	}
	if len(f.InstructionLinks) > 0 {
		if fromProject {
			return invalidf("%s: instruction_links may only be set in your user config (%s), not in a project's config", p, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.InstructionLinks = append(c.InstructionLinks, f.InstructionLinks...)
	}
	if err := c.applyBudgets(f, p); err != nil {
		return err
	}
	if f.Style != "" {
		if !ValidStyle(f.Style) {
			return invalidf("%s: style %q is not one of auto, dark, light or notty", p, f.Style)
		}
		c.Style = f.Style
	}
	if err := c.applyRetention(f.Retention, p); err != nil {
		return err
	}
	if err := c.applyEngine(f.Engine, p, fromProject); err != nil {
		return err
	}
	if err := c.applyPromptTemplate(f.PromptTemplate, p, fromProject); err != nil {
		return err
	}
	if err := c.applyRunChoices(f, p); err != nil {
		return err
	}
	return c.applyPermissions(f, p, fromProject)
}

// applyPermissions takes what one config file says the model and the
// programs ralph starts may do: the sandbox, the agents' tables, the
// limits, the fallback models, the command rules, hooks and language
// servers.
func (c *Config) applyPermissions(f File, p string, fromProject bool) error {
	if err := c.applySandbox(f, p, fromProject); err != nil {
		return err
	}
	if err := c.applyAgents(f, p, fromProject); err != nil {
		return err
	}
	if err := c.applyLimits(f, p, fromProject); err != nil {
		return err
	}
	if err := c.applyFallback(f.FallbackFile, p, fromProject); err != nil {
		return err
	}
	if fromProject {
		c.ProjectAllowedCommands = append(c.ProjectAllowedCommands, f.AllowedCommands...)
	} else {
		c.AllowedCommands = append(c.AllowedCommands, f.AllowedCommands...)
	}
	if err := c.applyHooks(f, p, fromProject); err != nil {
		return err
	}
	return c.applyLSP(f, p, fromProject)
}

// applyEndpoint takes model, base_url, api_key_env and provider from one
// config file, and notes for Resolve which file said what.
func (c *Config) applyEndpoint(f File, p string, fromProject bool) error {
	if fromProject && f.APIKeyEnv != "" {
		// A cloned repository must not pick which secret ralph sends.
		return invalidf("%s: api_key_env may only be set in your user config (%s), not in a project's config", p, filepath.Join("~/.config/ralph", "config.toml"))
	}
	if f.Model != "" {
		c.Model, c.src.modelGiven = f.Model, true
	}
	if f.BaseURL != "" {
		if fromProject {
			c.userBaseURL = c.BaseURL
		}
		c.BaseURL = f.BaseURL
		c.BaseURLFromProject = fromProject
		c.src.baseURLGiven, c.src.baseURLWhy = true, fmt.Sprintf("base_url is set in %s", displayPath(p))
	}
	if f.APIKeyEnv != "" {
		c.APIKeyEnv = f.APIKeyEnv
		c.src.keyEnvGiven, c.src.keyEnvWhy = true, fmt.Sprintf("api_key_env = %q in %s names the key", f.APIKeyEnv, displayPath(p))
	}
	if f.Provider != "" {
		if _, ok := providers.Named(f.Provider); !ok {
			return invalidf("%s: provider %q is not one ralph knows; use one of %s", p, f.Provider, ProviderNames())
		}
		// A project's provider counts like its base_url: Validate lets
		// it have only the provider's own key go to the provider's own
		// endpoint, unless the person's own file names the same
		// provider.
		c.src.providerFromProject = fromProject && !strings.EqualFold(c.src.provider, f.Provider)
		c.Provider, c.src.provider = strings.ToLower(f.Provider), strings.ToLower(f.Provider)
		c.src.providerFrom = fmt.Sprintf("provider = %q in %s", f.Provider, displayPath(p))
	}
	return nil
}

// applyModelChoice takes how the model is spoken to from one config
// file: the wire, the tool family and the thinking budget.
func (c *Config) applyModelChoice(f File, p string) error {
	if f.Wire != "" {
		w := strings.ToLower(strings.TrimSpace(f.Wire))
		if !slices.Contains(providers.Wires(), w) {
			return invalidf("%s: wire %q is not one of %s (which of OpenAI's APIs ralph speaks: auto chooses by model)", p, f.Wire, strings.Join(providers.Wires(), ", "))
		}
		c.Wire = w
	}
	if f.ToolFamily != "" {
		fam, ok := providers.FamilyNamed(f.ToolFamily)
		if !ok {
			return invalidf("%s: tool_family %q is not one of %s (the tools a model is offered: leave it out to follow each model's)", p, f.ToolFamily, strings.Join(familyNames(), ", "))
		}
		c.ToolFamily = fam.Name()
	}
	if f.ThinkingTokens != nil {
		c.ThinkingTokens = *f.ThinkingTokens
	}
	return nil
}

// applyBudgets takes the numbers that bound a run from one config file:
// turns, tokens, prices, retries and timeouts. Validate judges them once
// every source has had its say.
func (c *Config) applyBudgets(f File, p string) error {
	if f.MaxTurns != 0 {
		c.MaxTurns = f.MaxTurns
	}
	if f.ContextTokens != 0 {
		c.ContextTokens = f.ContextTokens
	}
	if f.CheckpointMaxMB != 0 {
		c.CheckpointMaxFileMB = f.CheckpointMaxMB
	}
	if f.MaxOutputTokens != 0 {
		c.MaxOutputTokens = f.MaxOutputTokens
	}
	if f.InputPrice != 0 || f.OutputPrice != 0 {
		c.InputPrice, c.OutputPrice = f.InputPrice, f.OutputPrice
	}
	if f.MaxRetries != nil {
		c.MaxRetries = *f.MaxRetries
	}
	if f.CommandTimeoutS != 0 {
		c.CommandTimeout = time.Duration(f.CommandTimeoutS) * time.Second
	}
	if f.StreamIdleTimeout != nil {
		d, err := parseSeconds(f.StreamIdleTimeout)
		if err != nil {
			return invalidf("%s: stream_idle_timeout: %v", p, err)
		}
		c.IdleTimeout = d
	}
	return nil
}

// applyRunChoices takes how ralph run works from one config file: when
// reviewers read the work, where tasks come from and where plans are
// kept.
func (c *Config) applyRunChoices(f File, p string) error {
	switch f.Review {
	case "":
	case "task", "end":
		c.Review = f.Review
	default:
		return invalidf("%s: review %q is not task or end", p, f.Review)
	}
	switch f.Tracker {
	case "":
	case TrackerFiles, TrackerBeads:
		c.Tracker = f.Tracker
	default:
		return invalidf("%s: tracker %q is not %s or %s", p, f.Tracker, TrackerFiles, TrackerBeads)
	}
	if f.PlansDir != "" {
		if filepath.IsAbs(f.PlansDir) || strings.HasPrefix(filepath.Clean(f.PlansDir), "..") {
			return invalidf("%s: plans_dir %q must be a directory inside the project, relative to its root", p, f.PlansDir)
		}
		c.PlansDir = filepath.ToSlash(filepath.Clean(f.PlansDir))
	}
	return nil
}

// mergeMCP joins the MCP servers of every source: the config files',
// the plugins' and the project's .mcp.json, with a warning for each one
// left out. Neither a plugin's files nor .mcp.json ever have the model's
// key expanded in them: their authors are not the person.
func (c *Config) mergeMCP(src Sources, files fileServers) {
	var jsonMCP []MCPServer
	if src.ProjectRoot != "" {
		jsonMCP, c.MCPWarnings = projectMCPJSON(src.Fs, src.ProjectRoot, withoutModelKeys(src.Getenv, c.APIKeyEnv))
	}
	pluginMCP, warns := pluginServers(src.UserFs, src.UserConfigDir, src.ProjectRoot, withoutModelKeys(src.Getenv, c.APIKeyEnv))
	c.MCPWarnings = append(c.MCPWarnings, warns...)
	c.MCPServers, warns = mergeServers(files.user, pluginMCP, files.project, jsonMCP)
	c.MCPWarnings = append(c.MCPWarnings, warns...)
}

// applyEnv takes the environment's say over the files': the endpoint,
// model and provider variables, and MAX_THINKING_TOKENS.
func (c *Config) applyEnv(getenv func(string) string) error {
	for _, s := range []Setting{BaseURLSetting, ModelSetting, ProviderSetting} {
		c.Apply(s, getenv(s.Env), FromEnv)
	}
	if v := getenv("MAX_THINKING_TOKENS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return invalidf("MAX_THINKING_TOKENS=%q is not a number of tokens", v)
		}
		c.ThinkingTokens = n
	}
	return nil
}

// MaxConfigFile is the most ralph reads of a config file (config.toml,
// .mcp.json): a real one is a few kilobytes, and one over a megabyte is a
// mistake said in one sentence rather than parsed for seconds.
const MaxConfigFile = 1 << 20

// readConfig reads a config file whole, up to MaxConfigFile: the one way
// config files are read. A larger one is ErrInvalid in the sentence of
// its *rootfs.TooLargeError alone, which names the file.
func readConfig(fs afero.Fs, path string) ([]byte, error) {
	data, err := rootfs.ReadSmall(fs, path, MaxConfigFile)
	if errors.Is(err, rootfs.ErrTooLarge) {
		return nil, invalidf("%w", err)
	}
	return data, err
}

// readFile reads and decodes one config file; ok is false when it does
// not exist. A key ralph does not know is an error naming it, so that a
// misspelt setting is not silently ignored.
func readFile(fs afero.Fs, path string) (File, bool, error) {
	var f File
	data, err := readConfig(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return f, false, nil
	}
	if errors.Is(err, ErrInvalid) {
		return f, false, err
	}
	if err != nil {
		return f, false, invalidf("cannot read %s: %w", path, err)
	}
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return f, false, invalidf("%s: line %d: %s", path, perr.Position.Line, perr.Message)
		}
		return f, false, invalidf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return f, false, invalidf("%s: %s", path, unknownKey(keys[0]))
	}
	return f, true, nil
}
