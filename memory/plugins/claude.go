package plugins

import (
	"encoding/json"
	"slices"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// settingsLimit is how much of a Claude Code settings file is read for
// its enabledPlugins.
const settingsLimit = 1 << 20

// EnabledPlugins lists the plugins a Claude Code settings file (read
// through fsys, a door on its directory) enables by its enabledPlugins
// key, as "NAME@MARKETPLACE". ralph does not install them, since they come
// from a marketplace; the caller says so once, naming them. A file that is
// missing, unreadable or not JSON enables none.
func EnabledPlugins(fsys afero.Fs, file string) []string {
	data, err := rootfs.ReadSmall(fsys, file, settingsLimit)
	if err != nil {
		return nil
	}
	var s struct {
		EnabledPlugins map[string]json.RawMessage `json:"enabledPlugins"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	var out []string
	for name, v := range s.EnabledPlugins {
		var on bool
		// Claude Code keeps true/false; anything else counts as named.
		if json.Unmarshal(v, &on) != nil || on {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
