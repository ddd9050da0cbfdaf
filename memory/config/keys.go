package config

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
)

// knownKeys are the settings a config file may hold, as dotted keys,
// read off File's toml tags: the decoder accepts exactly these, so the
// list an unknown setting is answered with cannot fall behind it. A
// table of tables (agents, mcp_servers) stands for its own keys with its
// "key" tag ("agents.<kind>.model").
//
// They are listed on first use: a command that reads no config file (ralph
// --version) does not walk File's fields (docs/development.md, "Start-up
// budget").
var knownKeys = sync.OnceValue(func() []string { return tomlKeys(reflect.TypeFor[File](), "") })

// tomlKeys are the dotted keys of the struct t's toml-tagged fields.
func tomlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// An embedded part of the schema (FallbackFile): its keys
			// are the file's own, as the TOML decoder reads them.
			keys = append(keys, tomlKeys(f.Type, prefix)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, tomlKeys(ft, prefix+name+".")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, tomlKeys(ft.Elem(), prefix+name+"."+f.Tag.Get("key")+".")...)
		default:
			keys = append(keys, prefix+name)
		}
	}
	return keys
}

// mcpPrefix starts the keys of an [mcp_servers.<name>] table.
const mcpPrefix = "mcp_servers.<name>."

// unknownKey is the sentence answering a setting no config may hold: the
// known setting it is a typo of, if any, and the known settings of its
// kind (an MCP server's, or a config's).
func unknownKey(key string) string {
	mcp := strings.HasPrefix(key, "mcp_servers.")
	var known []string
	for _, k := range knownKeys() {
		if strings.HasPrefix(k, mcpPrefix) == mcp {
			known = append(known, k)
		}
	}
	var msg string
	if mcp {
		msg = fmt.Sprintf("unknown MCP server setting %q", key)
	} else {
		msg = fmt.Sprintf("unknown setting %q", key)
	}
	if near := nearKey(key, known); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	if mcp {
		for i, k := range known {
			known[i] = strings.TrimPrefix(k, mcpPrefix)
		}
		return msg + " (known: " + strings.Join(known, ", ") + ")"
	}
	msg += " (known: " + strings.Join(known, ", ")
	if len(AgentKinds) > 0 {
		msg += "; <kind> is " + strings.Join(AgentKinds, ", ")
	}
	return msg + "; and [mcp_servers.<name>] tables)"
}

// nearKey is the known key that key is a typo of, written with key's own
// names in the places of <kind> and <name>: "agents.codex.modle" is near
// "agents.codex.model".
func nearKey(key string, known []string) string {
	parts := strings.Split(key, ".")
	var cands []string
	for _, k := range known {
		kp := strings.Split(k, ".")
		if len(kp) != len(parts) {
			continue
		}
		for i, p := range kp {
			if strings.HasPrefix(p, "<") {
				kp[i] = parts[i]
			}
		}
		cands = append(cands, strings.Join(kp, "."))
	}
	return text.Nearest(key, cands)
}
