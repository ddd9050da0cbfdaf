package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/plugins"
)

// A plugin the person added with `ralph plugin add` brings its MCP
// servers (its .mcp.json and its manifest's mcpServers, read by
// memory/plugins) as Claude Code starts them once the plugin is
// installed. Whose the plugin is (plugins.Whose) decides how each runs:
//
//   - the person's plugin (outside every project and temporary directory,
//     from a source the person chose): its servers are the person's own,
//     started outside the sandbox and outside the project, in the
//     plugin's directory, with no approval, as a server of the person's
//     config.toml is;
//   - any other plugin (one inside a project, or from a marketplace that
//     lies in one): its files are ones the model could have written, so
//     its servers are the project's (FromProject). They wait for the
//     approval a project's .mcp.json needs (`ralph mcp approve`), and one
//     that touches the project (its directory, its paths, the temporary
//     directory: workers.ServerTouchesProject) runs in the sandbox.
//
// ${CLAUDE_PLUGIN_ROOT} is the plugin's directory, in every field, and in
// what the person approves (it is where the plugin lies, not a variable
// of the person's); the server's environment holds it too, as Claude
// Code's does. Other ${VAR}s are expanded as in a project's .mcp.json:
// the model's key is never one of them, since a plugin's author wrote
// the file.

// pluginRootVar is the variable a plugin's files name their directory by.
const pluginRootVar = "CLAUDE_PLUGIN_ROOT"

// pluginServers are the MCP servers of the plugins the person added, for
// a session in projectRoot ("" outside one).
func pluginServers(person afero.Fs, userConfigDir, projectRoot string, getenv func(string) string) ([]MCPServer, []string) {
	if userConfigDir == "" || plugins.ManifestPath == "" {
		return nil, nil
	}
	list, err := plugins.List(person, userConfigDir, projectRoot)
	if err != nil {
		return nil, []string{fmt.Sprintf("the plugins' MCP servers are left out: %v", err)}
	}
	var out []MCPServer
	var warns []string
	seen := map[string]string{}
	for _, p := range list {
		files, problems := p.MCPFiles()
		for _, pr := range problems {
			warns = append(warns, fmt.Sprintf("plugin %s: %s", p.Name, pr))
		}
		for _, f := range files {
			for _, name := range slices.Sorted(maps.Keys(f.Servers)) {
				var d jsonServer
				if err := json.Unmarshal(f.Servers[name], &d); err != nil {
					warns = append(warns, fmt.Sprintf("%s: server %q is not an object ralph reads; the server is left out: %v", f.Path, name, err))
					continue
				}
				if prev, ok := seen[name]; ok {
					warns = append(warns, fmt.Sprintf("MCP server %q of %s is left out: %s defines a server of that name", name, f.Path, prev))
					continue
				}
				s, warn := pluginServer(p, name, rooted(d, p.Dir), f.Path, getenv)
				if warn != "" {
					warns = append(warns, warn)
					continue
				}
				seen[name] = f.Path
				out = append(out, s)
			}
		}
	}
	return out, warns
}

// pluginServer resolves one server of the plugin p.
func pluginServer(p plugins.Plugin, name string, d jsonServer, path string, getenv func(string) string) (MCPServer, string) {
	fromProject := !p.Trust.Persons
	if fromProject && d.Cwd == "" {
		// A server of a plugin that is not the person's starts in the
		// plugin's directory, which the launcher judges: inside the
		// project or a temporary directory, it runs in the sandbox.
		d.Cwd = p.Dir
	}
	s, warn := jsonMCPServer(name, d, path, fromProject, getenv)
	if warn != "" {
		return s, warn
	}
	if s.Cwd == "" {
		s.Cwd = p.Dir
	}
	if s.Transport == TransportStdio {
		env := maps.Clone(s.Env)
		if env == nil {
			env = map[string]string{}
		}
		if _, set := env[pluginRootVar]; !set {
			env[pluginRootVar] = p.Dir
		}
		s.Env = env
	}
	s.Plugin = p.Name
	return s, ""
}

// rooted is d with ${CLAUDE_PLUGIN_ROOT} replaced by the plugin's
// directory in every field.
func rooted(d jsonServer, dir string) jsonServer {
	r := strings.NewReplacer("${"+pluginRootVar+"}", dir)
	d.Command, d.URL, d.Cwd = r.Replace(d.Command), r.Replace(d.URL), r.Replace(d.Cwd)
	if d.Args != nil {
		args := make([]string, len(d.Args))
		for i, a := range d.Args {
			args[i] = r.Replace(a)
		}
		d.Args = args
	}
	replaceMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = r.Replace(v)
		}
		return out
	}
	d.Env, d.Headers = replaceMap(d.Env), replaceMap(d.Headers)
	return d
}
