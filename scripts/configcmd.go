package scripts

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// overrides are the flags that change the configuration a session runs
// with, as project.Open and `ralph config` take them.
func (f *flags) overrides() project.Overrides {
	return project.Overrides{Model: f.model, BaseURL: f.baseURL, MaxTurns: f.maxTurns, MaxRetries: f.maxRetries,
		CommandTimeout: time.Duration(f.commandTimeout) * time.Second, IdleTimeout: f.idleTimeout, Parallel: f.parallel, MaxOutputTokens: f.maxOutput,
		Sandbox: f.sandbox, NoNetwork: f.noNetwork, MaxWait: f.maxWaitOverride()}
}

// configFile is one config file read, lowest precedence first, with the
// settings it sets.
type configFile struct {
	Path string   `json:"path"`
	Keys []string `json:"keys"`
}

// configValue is one value of the effective configuration and where it came
// from: "default", "flag --NAME", "env NAME" or the files that set it.
type configValue struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// effective is the configuration a session here would run with, as
// `ralph config` and `ralph doctor` report it.
type effective struct {
	Root  string
	Cfg   config.Config
	Files []configFile
	// KeySource says where the API key comes from, never what it is.
	KeySource string
	Settings  []configValue
}

// loadEffective resolves the configuration as a session would, without
// the project lock or a session. err is the configuration's own error (a
// file that does not parse, a setting refused); Root and Files are set
// as far as they were found.
func (c *cli) loadEffective(cmd *cobra.Command) (effective, error) {
	var e effective
	root, err := c.root()
	if err != nil {
		return e, err
	}
	root, cfg, err := project.EffectiveConfig(root, c.f.overrides())
	e.Root, e.Cfg = root, cfg
	if root != "" {
		door, derr := rootfs.New(root)
		if derr != nil && err == nil {
			err = derr
		}
		userFile := config.UserFile(config.UserConfigDir())
		for _, p := range config.Paths(config.UserConfigDir(), root) {
			// The person's file through theirs, the project's through
			// the project's door.
			fs := rootfs.Person()
			if p != userFile {
				if door == nil {
					continue
				}
				fs = door
			}
			if _, statErr := os.Stat(p); statErr != nil {
				continue
			}
			keys, kerr := config.FileKeys(fs, p)
			if kerr != nil && err == nil {
				err = kerr
			}
			e.Files = append(e.Files, configFile{Path: p, Keys: nonNil(keys)})
		}
	}
	if err != nil {
		return e, err
	}
	e.KeySource = keySource(e)
	e.Settings = e.settings(cmd)
	return e, nil
}

// keySource says where the API key is read from, and whether it is set;
// the key itself is never part of it.
func keySource(e effective) string {
	if e.Cfg.APIKey == "" {
		return keyVariable(e) + ", not set"
	}
	return keyVariable(e)
}

// keyVariable names the variable the key is read from, and the file that
// chose it when one did.
func keyVariable(e effective) string {
	where := "env " + e.Cfg.APIKeyEnv
	if f := e.setBy("api_key_env"); f != "" {
		where += " (api_key_env in " + f + ")"
	}
	return where
}

// setBy is the last file that sets key, or "".
func (e effective) setBy(key string) string {
	last := ""
	for _, f := range e.Files {
		if slices.Contains(f.Keys, key) {
			last = f.Path
		}
	}
	return last
}

// setByAll is every file that sets key or a key under it ("agents"
// covers agents.<kind>.model), joined.
func (e effective) setByAll(key string) string {
	var files []string
	for _, f := range e.Files {
		for _, k := range f.Keys {
			if k == key || strings.HasPrefix(k, key+".") {
				files = append(files, f.Path)
				break
			}
		}
	}
	return strings.Join(files, ", ")
}

// settings lists the effective configuration, each value with its source.
func (e effective) settings(cmd *cobra.Command) []configValue {
	cfg := e.Cfg
	source := func(key, flag, env string) string {
		if flag != "" && cmd.Flags().Changed(flag) {
			return "flag --" + flag
		}
		if env != "" && os.Getenv(env) != "" {
			return "env " + env
		}
		if f := e.setByAll(key); f != "" {
			return f
		}
		return "default"
	}
	apiKey := "set"
	if cfg.APIKey == "" {
		apiKey = "not set"
	}
	noNetworkFlag := ""
	if cmd.Flags().Changed("no-network") {
		noNetworkFlag = "no-network"
	}
	sandbox := cfg.Sandbox
	if sandbox == "" {
		sandbox = config.DefaultSandbox
	}
	var mcp []string
	for _, s := range cfg.MCPServers {
		mcp = append(mcp, s.Name)
	}
	agents := cfg.Agents
	if agents == nil {
		agents = map[string]config.Agent{}
	}
	list := []struct {
		key, flag, env string
		value          any
	}{
		{"model", "model", "RALPH_MODEL", cfg.Model},
		{"base_url", "base-url", "OPENAI_BASE_URL", cfg.BaseURL},
		{"api_key", "", "", apiKey},
		{"max_turns", "max-turns", "", cfg.MaxTurns},
		{"max_retries", "max-retries", "", cfg.MaxRetries},
		{"command_timeout_s", "command-timeout", "", int(cfg.CommandTimeout / time.Second)},
		{"stream_idle_timeout", "idle-timeout", "", cfg.IdleTimeout.String()},
		{"context_tokens", "", "", cfg.ContextTokens},
		{"max_output_tokens", "max-output-tokens", "", cfg.MaxOutputTokens},
		{"input_price_per_mtok", "", "", cfg.InputPrice},
		{"output_price_per_mtok", "", "", cfg.OutputPrice},
		{"checkpoint_max_file_mb", "", "", cfg.CheckpointMaxFileMB},
		{"sandbox", "sandbox", "", sandbox},
		{"network", noNetworkFlag, "", cfg.Network},
		{"sandbox_writable", "", "", nonNil(cfg.SandboxWritable)},
		{"sandbox_unix_sockets", "", "", nonNil(cfg.SandboxUnixSockets)},
		{"sandbox_readable", "", "", nonNil(cfg.SandboxReadable)},
		{"shell_env", "", "", nonNil(cfg.ShellEnv)},
		{"allowed_commands", "", "", nonNil(append(slices.Clone(cfg.AllowedCommands), cfg.ProjectAllowedCommands...))},
		{"ask_before", "", "", nonNil(cfg.AskBefore)},
		{"style", "style", "", cfg.Style},
		{"max_retry_after", "", "", cfg.MaxRetryAfter.String()},
		{"max_wait", "", "", cfg.MaxWait.String()},
		{"answer_timeout", "", "", cfg.AnswerTimeout.String()},
		{"notify_command", "", "", cfg.NotifyCommand},
		{"retention", "", "", map[string]any{"keep": cfg.Retention.Keep, "older_than": cfg.Retention.OlderThan.String()}},
		{"engine", "", "", map[string]any{"name": cfg.Engine.Name, "address": cfg.Engine.Address, "namespace": cfg.Engine.Namespace,
			"task_queue": cfg.Engine.TaskQueue, "tls": cfg.Engine.TLS}},
		{"prompt_template", "", "", cfg.PromptTemplate},
		{"plans_dir", "", "", cfg.PlansDir},
		{"review", "", "", cfg.Review},
		{"agents", "", "", agents},
		{"mcp_servers", "", "", nonNil(mcp)},
	}
	out := make([]configValue, 0, len(list))
	for _, s := range list {
		src := source(s.key, s.flag, s.env)
		if s.key == "api_key" {
			src = keyVariable(e) // never the key itself
		}
		out = append(out, configValue{Key: s.key, Value: s.value, Source: src})
	}
	return out
}

// configCommand is `ralph config`: the effective configuration.
func (c *cli) configCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration and where each value came from (--json)",
		Long: `Print the configuration a session started here would run with: every
setting's value and where it came from (a flag, an environment variable, a
config file, or the default), after the config files read, in order. The API
key is never printed: only the variable it is read from, and whether it is set.`,
		Example: `  ralph config
  ralph config --json | jq -r '.settings[] | select(.key=="model") | .value'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := c.loadEffective(cmd)
			if err != nil {
				return usageErrorf("%s", err)
			}
			return writeConfig(os.Stdout, e, c.f.json)
		},
	}
}

// writeConfig prints the effective configuration as text or JSON.
func writeConfig(w io.Writer, e effective, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		files := e.Files
		if files == nil {
			files = []configFile{}
		}
		return enc.Encode(map[string]any{"files": files, "settings": e.Settings})
	}
	fmt.Fprintln(w, "Config files read, in order (later wins):")
	if len(e.Files) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, f := range e.Files {
		fmt.Fprintf(w, "  %s: %s\n", f.Path, keysText(f.Keys))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, s := range e.Settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, valueText(s.Value), s.Source)
	}
	return tw.Flush()
}

// keysText lists a file's keys, or says it sets none.
func keysText(keys []string) string {
	if len(keys) == 0 {
		return "sets nothing"
	}
	return strings.Join(keys, ", ")
}

// valueText shows a value on one line: lists and tables as JSON, an
// empty one as "-".
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "-"
		}
		return x
	case []string:
		if len(x) == 0 {
			return "-"
		}
		return strings.Join(x, ", ")
	case map[string]config.Agent:
		if len(x) == 0 {
			return "-"
		}
		kinds := make([]string, 0, len(x))
		for k := range x {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		return strings.Join(kinds, ", ")
	case int, bool, float64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
