//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/config"
)

// seenRoots is what a server learned of the client's roots: whether the
// client declared the capability at all, and the roots it listed.
type seenRoots struct {
	Declared bool     `json:"declared"`
	Roots    []string `json:"roots"`
}

// rootsServer is an MCP server, built with the Go SDK, whose one tool
// tells what the client declared and listed as roots, as
// server-filesystem would see it.
func rootsServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "roots", Version: "v1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "The client's roots."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			var seen seenRoots
			if caps := req.Session.InitializeParams().Capabilities; caps != nil && caps.RootsV2 != nil {
				seen.Declared = true
				res, err := req.Session.ListRoots(ctx, nil)
				if err != nil {
					return nil, nil, err
				}
				for _, r := range res.Roots {
					seen.Roots = append(seen.Roots, r.URI)
				}
			}
			data, _ := json.Marshal(seen)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}, nil, nil
		})
	return s
}

// rootsSeenBy connects ralph's client for cfg (as the Manager builds it)
// to rootsServer in memory and returns what the server saw: the
// capability the client declared at initialization and, if it did, the
// roots it lists when the server asks, as server-filesystem asks once
// initialized.
func rootsSeenBy(t *testing.T, cfg config.MCPServer, projectDir string) seenRoots {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := rootsServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// Servers that use roots speak a protocol from before 2026-07-28, which
	// lets a server ask the client for them; server-filesystem does.
	cs, err := newClient("test", serverRoots(cfg, projectDir), projectDir, nil).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var seen seenRoots
	if caps := ss.InitializeParams().Capabilities; caps != nil && caps.RootsV2 != nil {
		seen.Declared = true
		res, err := ss.ListRoots(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Roots {
			seen.Roots = append(seen.Roots, r.URI)
		}
	}
	return seen
}

// TestRootsKeepAServersOwnDirectories: a server started with directories
// of its own is not told ralph supports roots (server-filesystem would
// replace its directories with them); one without is offered the project;
// roots = [...] in its table overrides both, relative to the project, and
// roots = [] offers none.
func TestRootsKeepAServersOwnDirectories(t *testing.T) {
	project, notes := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(project, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs := func(args ...string) config.MCPServer {
		return config.MCPServer{Name: "fs", Transport: config.TransportStdio, Command: "npx",
			Args: append([]string{"-y", "@modelcontextprotocol/server-filesystem"}, args...)}
	}
	withCwd := fs("docs")
	withCwd.Cwd = project
	overridden := fs(notes)
	overridden.Roots = []string{"docs", notes}
	none := fs()
	none.Roots = []string{}
	httpServer := config.MCPServer{Name: "web", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp"}
	for _, c := range []struct {
		name string
		cfg  config.MCPServer
		want seenRoots
	}{
		{"its own directory", fs(notes), seenRoots{}},
		{"a relative directory of its own", withCwd, seenRoots{}},
		{"an --option=directory", fs("--root=" + notes), seenRoots{}},
		{"a directory among other arguments", fs("--read-only", notes, "missing-dir"), seenRoots{}},
		{"no directory", fs("--read-only", "not-a-dir"), seenRoots{Declared: true, Roots: []string{fileURI(project)}}},
		{"roots override", overridden, seenRoots{Declared: true, Roots: []string{fileURI(filepath.Join(project, "docs")), fileURI(notes)}}},
		{"roots = []", none, seenRoots{}},
		{"an HTTP server", httpServer, seenRoots{Declared: true, Roots: []string{fileURI(project)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := rootsSeenBy(t, c.cfg, project)
			slices.Sort(got.Roots)
			slices.Sort(c.want.Roots)
			if got.Declared != c.want.Declared || !slices.Equal(got.Roots, c.want.Roots) {
				t.Fatalf("the server saw %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestManagerOffersRootsPerServer: the Manager gives each server its own
// client, so one server's roots are not another's.
func TestManagerOffersRootsPerServer(t *testing.T) {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return rootsServer() }, nil)
	web := httptest.NewServer(h)
	t.Cleanup(web.Close)
	project := t.TempDir()
	open := config.MCPServer{Name: "open", Transport: config.TransportHTTP, URL: web.URL, Enabled: true,
		ToolTimeout: 30 * time.Second, StartupTimeout: 30 * time.Second}
	closed := open
	closed.Name, closed.Roots = "closed", []string{}
	m := New(Options{Servers: []config.MCPServer{open, closed}, Dir: project, Approver: &approver{}})
	t.Cleanup(m.Close)
	m.Prepare(context.Background())
	for name, want := range map[string]string{
		"mcp__open__roots":   `{"declared":true,"roots":["` + fileURI(project) + `"]}`,
		"mcp__closed__roots": `{"declared":false,"roots":null}`,
	} {
		if r := call(t, m, name, `{}`); r.IsError || strings.TrimSpace(r.Output) != want {
			t.Errorf("%s: %+v, want %s", name, r, want)
		}
	}
}

func TestFileURIEscapes(t *testing.T) {
	if got := fileURI("/tmp/a dir/#1"); got != "file:///tmp/a%20dir/%231" {
		t.Fatalf("fileURI = %q", got)
	}
}

// TestSettleRoots: a server that did not ask for its roots is ready at
// once; one that asked is given rootsSettle after the answer, and one
// still being answered waits for the answer first.
func TestSettleRoots(t *testing.T) {
	var state atomic.Int64
	start := time.Now()
	settleRoots(context.Background(), &state)
	// No wait at all: the bound is a hang's, so that a busy machine
	// does not fail it.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a server that did not ask waited %s", d)
	}
	state.Store(rootsAsking)
	start = time.Now()
	time.AfterFunc(100*time.Millisecond, func() { state.Store(time.Now().UnixNano()) })
	settleRoots(context.Background(), &state)
	if d := time.Since(start); d < 100*time.Millisecond+rootsSettle-10*time.Millisecond {
		t.Fatalf("a server being answered was ready after %s", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	state.Store(rootsAsking)
	start = time.Now()
	settleRoots(ctx, &state)
	// Without its context a server that is still being answered is waited
	// for without end: seconds catch that.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("settleRoots outlived its context: %s", d)
	}
}
