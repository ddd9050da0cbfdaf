package config

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"
)

// Paths are the config files Load reads, lowest precedence first, whether
// or not they exist: the user's (when there is a config directory), then
// the project's (when there is a project).
func Paths(userConfigDir, projectRoot string) []string {
	var paths []string
	if userConfigDir != "" {
		paths = append(paths, UserFile(userConfigDir))
	}
	if projectRoot != "" {
		paths = append(paths, filepath.Join(projectRoot, ProjectFile))
	}
	return paths
}

// FileKeys lists the settings one config file sets, as dotted keys
// ("model", "retention.keep", "agents.<kind>.model"), sorted; a server of
// [mcp_servers] counts as one key, "mcp_servers.NAME", since its fields
// are its definition rather than settings of their own. A file that does
// not exist sets nothing. It reads the file as Load does, for `ralph
// doctor` and `ralph config`, which say where each value came from.
func FileKeys(fs afero.Fs, path string) ([]string, error) {
	data, err := readConfig(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, ErrInvalid) {
		return nil, err
	}
	if err != nil {
		return nil, invalidf("cannot read %s: %w", path, err)
	}
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, invalidf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	var keys []string
	for _, k := range md.Keys() {
		if md.Type(k...) == "Hash" {
			continue // a table is named by the keys inside it
		}
		if len(k) > 2 && k[0] == "mcp_servers" {
			k = k[:2]
		}
		name := strings.Join(k, ".")
		if !seen[name] {
			seen[name] = true
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys, nil
}
