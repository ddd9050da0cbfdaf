package doctor

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/lsp"
)

// lspChecks report the language servers: each built-in and configured
// one, whether its command is on your PATH (off the project's entries:
// the program a session would start) and the file types it handles. No
// server is run, not even for its version: a language server reads the
// project (gopls runs go list), which doctor does not do.
func lspChecks(cfg config.Config) []Check {
	if cfg.LSP.Off {
		return []Check{{Name: "lsp", Status: StatusOK, Detail: "off (lsp_enabled = false): no language server starts"}}
	}
	var out []Check
	configured := map[string]config.LSPServer{}
	for _, s := range cfg.LSP.Servers {
		configured[s.Name] = s
	}
	onPath := func(c string) bool { _, err := childenv.Program(c); return err == nil }
	servers := lsp.Resolve(cfg.LSP, onPath)
	used := map[string]bool{}
	for _, s := range servers {
		used[s.Name] = true
		name := "lsp " + s.Name
		types := typesOf(s)
		path, err := childenv.Program(s.Command)
		if err != nil {
			out = append(out, Check{Name: name, Status: StatusWarning, Detail: fmt.Sprintf("%s is not on your PATH (outside the project); %s files get no diagnostics", s.Command, types),
				Fix: "install it, or set [lsp." + s.Name + "] command to its path, or enabled = false"})
			continue
		}
		detail := fmt.Sprintf("%s, for %s", path, types)
		if s.FromProject {
			detail += "; the project's (" + s.Source + "), asked before it starts"
		}
		out = append(out, Check{Name: name, Status: StatusOK, Detail: detail})
	}
	for _, b := range lsp.Builtin() {
		c, ok := configured[b.Name]
		if ok && c.Disabled {
			out = append(out, Check{Name: "lsp " + b.Name, Status: StatusOK, Detail: "turned off (enabled = false in " + c.Source + ")"})
			continue
		}
		if used[b.Name] {
			continue
		}
		detail := fmt.Sprintf("%s not found on your PATH (built in, for %s; optional)", b.Command, typesOf(b))
		if path, err := childenv.Program(b.Command); err == nil {
			detail = fmt.Sprintf("%s found, but another server handles %s first", path, typesOf(b))
		}
		out = append(out, Check{Name: "lsp " + b.Name, Status: StatusOK, Detail: detail})
	}
	return out
}

// typesOf is a server's file types as a person reads them: .go, .mod.
func typesOf(s config.LSPServer) string { return "." + strings.Join(s.Filetypes, ", .") }
