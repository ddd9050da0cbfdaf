package tools

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/lsp/lsptest"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// lspToolset is a Toolset whose one language server, for .go files, is
// the fake server (this test binary) in mode.
func lspToolset(t *testing.T, mode string) *Toolset {
	t.Helper()
	return newTestToolset(t, Options{Options: workers.Options{Sandbox: sandbox.FullAccess},
		LSP: &config.LSP{Wait: 3 * time.Second, Servers: []config.LSPServer{{Name: "fake", Command: os.Args[0], Args: []string{"-test.run=^$"},
			Filetypes: []string{"go"}, Env: map[string]string{lsptest.Env: mode}}}}})
}

func lspCall(t *testing.T, ts *Toolset, name string, args map[string]any) workers.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return ts.Call(context.Background(), name, raw)
}

// TestEditToolsCarryDiagnostics: write_file, edit_file and apply_patch
// results end with the server's diagnostics of the file, after one blank
// line; a file no server handles gets none; the fix clears them.
func TestEditToolsCarryDiagnostics(t *testing.T) {
	t.Parallel()
	ts := lspToolset(t, "ok")
	r := lspCall(t, ts, ToolWriteFile, map[string]any{"path": "main.go", "content": "package main\nERR: undefined: foo\n"})
	want := "wrote 33 bytes to main.go\n\ndiagnostics from fake for main.go (errors first; 1 of 1):\nmain.go:2:1: error: undefined: foo"
	if r.IsError || r.Output != want {
		t.Fatalf("write_file: got\n%s\nwant\n%s", r.Output, want)
	}
	r = lspCall(t, ts, ToolEditFile, map[string]any{"path": "main.go", "old_string": "ERR: undefined: foo", "new_string": "// fine"})
	if r.IsError || !strings.HasSuffix(r.Output, "\n\ndiagnostics from fake for main.go: none") {
		t.Fatalf("edit_file: %s", r.Output)
	}
	r = lspCall(t, ts, ToolApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: b.go\n+WARN: new\n*** End Patch\n"})
	if r.IsError || !strings.Contains(r.Output, "diagnostics from fake for b.go (errors first; 1 of 1):\nb.go:1:1: warning: new") {
		t.Fatalf("apply_patch: %s", r.Output)
	}
	r = lspCall(t, ts, ToolWriteFile, map[string]any{"path": "notes.txt", "content": "ERR: not code\n"})
	if strings.Contains(r.Output, "diagnostics") {
		t.Fatalf("a text file got diagnostics: %s", r.Output)
	}
}

// TestDiagnosticsToolAndCrash: the diagnostics tool answers in the same
// lines; a crashing server is one line and the edit succeeds.
func TestDiagnosticsToolAndCrash(t *testing.T) {
	t.Parallel()
	ts := lspToolset(t, "ok")
	if err := os.WriteFile(filepath.Join(ts.Root(), "a.go"), []byte("ERR: bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := lspCall(t, ts, ToolDiagnostics, map[string]any{"path": "a.go"})
	if r.IsError || r.Output != "diagnostics from fake for a.go (errors first; 1 of 1):\na.go:1:1: error: bad" {
		t.Fatalf("diagnostics: %q", r.Output)
	}
	r = lspCall(t, ts, ToolDiagnostics, map[string]any{})
	if r.IsError || !strings.Contains(r.Output, "a.go:1:1: error: bad") {
		t.Fatalf("diagnostics of the workspace: %q", r.Output)
	}

	crash := lspToolset(t, "crash")
	r = lspCall(t, crash, ToolWriteFile, map[string]any{"path": "a.go", "content": "package a\n"})
	if r.IsError || !strings.HasPrefix(r.Output, "wrote 10 bytes to a.go\n\nlanguage server fake stopped: it exited with status 3") {
		t.Fatalf("a crashing server: %q", r.Output)
	}
	if b, err := os.ReadFile(filepath.Join(crash.Root(), "a.go")); err != nil || string(b) != "package a\n" {
		t.Fatalf("the edit did not land: %q %v", b, err)
	}
}

// TestNoServerNoTool: without a server the diagnostics tool is not
// offered and results are as they were.
func TestNoServerNoTool(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{LSP: &config.LSP{Off: true}})
	for _, d := range ts.Definitions() {
		if d.Name == ToolDiagnostics {
			t.Fatal("the diagnostics tool is offered with no language server")
		}
	}
}

// TestLanguageServerRunsInTheSandbox: under workspace-write a language
// server is held as the model's commands are: it cannot write the
// project's .git/config.
func TestLanguageServerRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notes []string
	ts := newTestToolset(t, Options{Options: workers.Options{Root: root, Notify: func(s string) { notes = append(notes, s) }},
		LSP: &config.LSP{Wait: 10 * time.Second, Servers: []config.LSPServer{{Name: "fake", Command: os.Args[0], Args: []string{"-test.run=^$"},
			Filetypes: []string{"go"}, Env: map[string]string{lsptest.Env: "probe"}}}}})
	r := lspCall(t, ts, ToolWriteFile, map[string]any{"path": "a.go", "content": "package a\n"})
	if len(notes) > 0 && strings.Contains(strings.Join(notes, "\n"), "starts no language server") {
		t.Skipf("the Landlock-only fallback starts no language server: %q", notes)
	}
	if !strings.Contains(r.Output, "a.go:1:1: warning: refused") {
		t.Fatalf("the server was not held by the sandbox: %s (notes %q)", r.Output, notes)
	}
}

// TestLanguageServerHasTheCommandsNetwork: a language server runs the
// project's code (a node_modules/typescript the model may have written),
// so with the network off for the commands it has none either, where a
// project's MCP server gets it.
func TestLanguageServerHasTheCommandsNetwork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var notes []string
	ts := newTestToolset(t, Options{Options: workers.Options{Root: t.TempDir(), NoNetwork: true, Notify: func(s string) { notes = append(notes, s) }},
		LSP: &config.LSP{Wait: 10 * time.Second, Servers: []config.LSPServer{{Name: "fake", Command: os.Args[0], Args: []string{"-test.run=^$"},
			Filetypes: []string{"go"}, Env: map[string]string{lsptest.Env: "netprobe", "RALPH_FAKE_LSP_DIAL": ln.Addr().String()}}}}})
	r := lspCall(t, ts, ToolWriteFile, map[string]any{"path": "a.go", "content": "package a\n"})
	if len(notes) > 0 && strings.Contains(strings.Join(notes, "\n"), "starts no language server") {
		t.Skipf("the Landlock-only fallback starts no language server: %q", notes)
	}
	if !strings.Contains(r.Output, "a.go:1:1: warning: no network") {
		t.Fatalf("the server reached the network the commands are denied: %s (notes %q)", r.Output, notes)
	}
}
