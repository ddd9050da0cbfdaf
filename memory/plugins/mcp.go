package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// A plugin's MCP servers are defined as Claude Code reads them: in
// .mcp.json at the plugin's root, and by the manifest's mcpServers (a
// path, a list of paths, or the servers inline). Each file is either
// {"mcpServers": {NAME: {...}}}, as a project's .mcp.json is, or the
// servers' map alone, as the official marketplace's plugins write it
// (its playwright plugin's .mcp.json is {"playwright": {...}}). This
// package only reads them, through the plugin's door; memory/config turns
// them into servers (config.PluginServers), which start as the person's
// own do when the plugin is the person's, and wait for approval as a
// project's do when it is not.

// mcpPath is the plugin's default file of MCP servers, as Claude Code
// keeps it.
const mcpPath = ".mcp.json"

// MCPFile is one file of a plugin's MCP servers, read through its door.
type MCPFile struct {
	// Path names the file (the manifest for servers given inline).
	Path string
	// Servers are the definitions by name, as the file writes them.
	Servers map[string]json.RawMessage
}

// MCPFiles reads the plugin's MCP servers: .mcp.json when it exists, and
// what the manifest's mcpServers names or holds. What cannot be read is a
// sentence in the second result; the other files' servers still come.
func (p Plugin) MCPFiles() ([]MCPFile, []string) {
	if p.fsys == nil {
		return nil, nil
	}
	var out []MCPFile
	var problems []string
	read := func(path string, mustExist bool) {
		data, problem := p.readFile(path, "MCP servers' file", mustExist)
		switch {
		case problem != "":
			problems = append(problems, problem)
		case data != nil:
			servers, err := serverMap(data)
			if err != nil {
				problems = append(problems, fmt.Sprintf("its MCP servers' file %s is left out: %v", path, err))
				return
			}
			out = append(out, MCPFile{Path: path, Servers: servers})
		}
	}
	def := filepath.Join(p.Dir, mcpPath)
	read(def, false)
	raw := bytes.TrimSpace(p.Manifest.MCPServers)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '{':
		servers, err := serverMap(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("its manifest's \"mcpServers\" is left out: %v", err))
			break
		}
		out = append(out, MCPFile{Path: filepath.Join(p.Dir, filepath.FromSlash(ManifestPath)), Servers: servers})
	default:
		problems = append(problems, p.readNamed("mcpServers", "a servers object", raw, def, read)...)
	}
	return out, problems
}

// serverMap reads a file of MCP servers in either of its two forms.
func serverMap(data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object of MCP servers: %w", err)
	}
	if inner, ok := top["mcpServers"]; ok {
		var servers map[string]json.RawMessage
		if err := json.Unmarshal(inner, &servers); err != nil {
			return nil, fmt.Errorf("its \"mcpServers\" is not an object: %w", err)
		}
		return servers, nil
	}
	return top, nil
}

// MCPServerNames are the names of the servers the plugin defines, sorted,
// for `ralph plugin add` and `ralph plugin list`.
func (p Plugin) MCPServerNames() []string {
	files, _ := p.MCPFiles()
	var names []string
	for _, f := range files {
		for _, n := range slices.Sorted(maps.Keys(f.Servers)) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a, b) })
	return names
}
