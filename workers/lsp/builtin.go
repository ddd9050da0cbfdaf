package lsp

import (
	"slices"

	"github.com/ralph-dev/ralph/memory/config"
)

// Builtin is the table of servers ralph starts when their command is on
// the person's PATH (off the project's entries: childenv.Program) and no
// config file names them. A config table of the same name replaces the
// fields it sets; enabled = false turns one off. pyright and basedpyright
// handle the same files: the first found on PATH is taken.
func Builtin() []config.LSPServer {
	return []config.LSPServer{
		{Name: "gopls", Command: "gopls", Filetypes: []string{"go"}, RootMarkers: []string{"go.mod", "go.work"}},
		{Name: "pyright", Command: "pyright-langserver", Args: []string{"--stdio"}, Filetypes: []string{"py", "pyi"},
			RootMarkers: pythonMarkers},
		{Name: "basedpyright", Command: "basedpyright-langserver", Args: []string{"--stdio"}, Filetypes: []string{"py", "pyi"},
			RootMarkers: pythonMarkers},
		{Name: "typescript-language-server", Command: "typescript-language-server", Args: []string{"--stdio"},
			Filetypes: []string{"ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"}, RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"}},
		{Name: "rust-analyzer", Command: "rust-analyzer", Filetypes: []string{"rs"}, RootMarkers: []string{"Cargo.toml"}},
		{Name: "clangd", Command: "clangd", Filetypes: []string{"c", "h", "cc", "cpp", "cxx", "hpp", "hh"},
			RootMarkers: []string{"compile_commands.json", "compile_flags.txt", "CMakeLists.txt"}},
	}
}

var pythonMarkers = []string{"pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", "requirements.txt"}

// Resolve is the servers a session may start: the built-in table merged
// with the config's tables by name, less those turned off, and none at
// all when lsp_enabled = false. onPath says whether a command is on the
// person's PATH: a built-in server is kept only then (a configured one is
// kept whatever, so that its absence is said when a file needs it), and
// of two built-ins that handle the same file type the first found wins.
func Resolve(l config.LSP, onPath func(command string) bool) []config.LSPServer {
	if l.Off {
		return nil
	}
	configured := map[string]config.LSPServer{}
	for _, s := range l.Servers {
		configured[s.Name] = s
	}
	var out []config.LSPServer
	taken := map[string]bool{}
	for _, b := range Builtin() {
		s, ok := configured[b.Name]
		if ok {
			delete(configured, b.Name)
			if s.Disabled {
				continue
			}
			s = overlay(b, s)
		} else {
			s = b
			if !onPath(s.Command) || slices.ContainsFunc(s.Filetypes, func(ft string) bool { return taken[ft] }) {
				continue
			}
		}
		for _, ft := range s.Filetypes {
			taken[ft] = true
		}
		out = append(out, s)
	}
	for _, s := range l.Servers {
		if c, ok := configured[s.Name]; ok && !c.Disabled && c.Command != "" {
			out = append(out, c)
		}
	}
	return out
}

// overlay is the built-in server b with the fields its config table s
// sets.
func overlay(b, s config.LSPServer) config.LSPServer {
	out := b
	out.Source, out.FromProject = s.Source, s.FromProject
	if s.Command != "" {
		out.Command, out.Args = s.Command, s.Args
	} else if s.Args != nil {
		out.Args = s.Args
	}
	if s.Filetypes != nil {
		out.Filetypes = s.Filetypes
	}
	if s.RootMarkers != nil {
		out.RootMarkers = s.RootMarkers
	}
	if s.Env != nil {
		out.Env = s.Env
	}
	if !s.FromProject || s.Command == "" && s.Args == nil && s.Env == nil {
		// A project's table that changes nothing that runs needs no
		// approval: the built-in runs as it would have.
		out.FromProject = false
	}
	return out
}
