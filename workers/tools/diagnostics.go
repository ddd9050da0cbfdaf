package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/lsp"
)

// ToolDiagnostics asks the language servers for a file's diagnostics, or
// for what they reported of the workspace.
const ToolDiagnostics = "diagnostics"

// DiagnosticsParams are the diagnostics tool's arguments.
type DiagnosticsParams struct {
	Path string `json:"path" description:"File to check, relative to the project root. Leave it out for what the running language servers reported of every file."`
}

// newLSP is the session's language servers for t, or nil when the
// session has none (no settings, or lsp_enabled = false and nothing
// found). The one door between the edit tools and the servers is
// Toolset.call, where every tool's Result.Changed and Result.Changes are
// known after its step, whichever tool (write_file, edit_file,
// apply_patch in any family's form) wrote them; the servers start in the
// sandbox (Workspace.StartLanguageServer) and read through workers.ServerFiles.
func newLSP(t *Toolset, opts Options) *lsp.Set {
	if opts.LSP == nil {
		return nil
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	s := lsp.New(lsp.Options{Root: t.ws.Root(), Config: *opts.LSP, Env: env, Start: t.ws.StartLanguageServer,
		Files: workers.ServerFiles{W: t.ws}, Approve: opts.ApproveLSP, Notify: opts.Notify})
	if !s.Available() {
		return nil
	}
	return s
}

// LSP is the session's language servers (nil when it has none), for /lsp.
func (t *Toolset) LSP() *lsp.Set { return t.lsp }

// withDiagnostics adds to a tool's result what the language servers say
// of the files it changed, and tells them of what a command may have
// changed.
func (t *Toolset) withDiagnostics(ctx context.Context, name string, res workers.Result) workers.Result {
	if t.lsp == nil {
		return res
	}
	switch {
	case name == ToolRunCommand && res.BackgroundID == "", name == ToolCommandOutput:
		// A foreground command has ended, or a background one was read:
		// the open documents are sent again where they changed.
		t.lsp.CommandsRan(ctx)
		return res
	case res.IsError || res.Changed == nil && len(res.Changes) == 0:
		return res
	}
	var files []string
	for _, ch := range append(changedOf(res), res.Changes...) {
		abs := filepath.Join(t.ws.Root(), filepath.FromSlash(ch.Path))
		if !containsString(files, abs) {
			files = append(files, abs)
		}
	}
	res.Output = lsp.Append(res.Output, t.lsp.Edited(ctx, files))
	return res
}

func changedOf(res workers.Result) []workers.FileChange {
	if res.Changed == nil {
		return nil
	}
	return []workers.FileChange{*res.Changed}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (t *Toolset) diagnosticsTool() Tool {
	if t.lsp == nil {
		return nil
	}
	return NewTool(Def("diagnostics"), t.diagnostics)
}

// diagnostics is the diagnostics tool: a file's, after the server read
// it as it is on disk, or the workspace's as the servers last reported.
func (t *Toolset) diagnostics(ctx context.Context, raw json.RawMessage) workers.Result {
	var a DiagnosticsParams
	if err := decodeArgs(ToolDiagnostics, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		reports := t.lsp.Workspace()
		if len(reports) == 0 {
			return workers.Result{Output: "diagnostics from the running language servers: none"}
		}
		return workers.Result{Output: strings.TrimPrefix(lsp.Append("", reports), "\n\n")}
	}
	// The file the path leads to, links followed, is what the server is
	// sent and what the kept list is checked against.
	abs, display, err := t.ws.Resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if !(workers.ServerFiles{W: t.ws}).Exists(abs) {
		return errResult("%s is not a file of the project ralph may read", display)
	}
	reports := t.lsp.Edited(ctx, []string{abs})
	if len(reports) == 0 {
		return workers.Result{Output: "no language server handles " + display}
	}
	return workers.Result{Output: strings.TrimPrefix(lsp.Append("", reports), "\n\n")}
}

// lspSettings is the type of Options.LSP, named here so that the
// options read as the rest do.
type lspSettings = config.LSP

// lspServer is a language server's configuration, for ApproveLSP.
type lspServer = config.LSPServer
