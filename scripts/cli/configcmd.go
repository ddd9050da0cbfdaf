package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/doctor"
)

// configFile is one config file read, lowest precedence first, with the
// settings it sets; `ralph doctor` reports the same list.
type configFile = doctor.ConfigFile

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

// settings lists the effective configuration, each value with its source:
// the rows of the settings table that `ralph config` shows.
func (e effective) settings(cmd *cobra.Command) []configValue {
	var out []configValue
	for _, r := range sessionSettings() {
		if r.show == nil {
			continue
		}
		out = append(out, configValue{Key: r.key, Value: r.show(e), Source: e.configSource(r, cmd.Flags().Changed)})
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
			return writeConfig(c.stdout(), e, c.f.json)
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
		fmt.Fprintf(w, "  %s: %s\n", f.Path, f.KeysText())
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, s := range e.Settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, valueText(s.Value), s.Source)
	}
	return tw.Flush()
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
