package mcp

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/config"
)

// MCP roots are the directories a client tells a server to work in. A
// server that takes them does not add them to its own: the reference
// filesystem server (@modelcontextprotocol/server-filesystem) replaces the
// directories it was started with by the client's roots as soon as the
// client declares the capability and lists any. Offering the project to
// every server would therefore take a server for ~/notes away from
// ~/notes, and give one limited to docs/ the whole project, .git/hooks
// included.
//
// So ralph offers roots only where they cannot take the place of the
// server's own choice:
//   - `roots = [...]` in the server's table: those directories (relative
//     ones against the project root), and `roots = []` none;
//   - otherwise a stdio server whose arguments name an existing directory
//     (server-filesystem takes its directories as arguments) is offered
//     none;
//   - every other server is offered the project root.
//
// A server offered none is not told that ralph supports roots at all, so it
// keeps what it was started with rather than waiting for a list.

// serverRoots are the directories the server is offered as roots; empty
// means none.
func serverRoots(cfg config.MCPServer, projectDir string) []string {
	if cfg.Roots != nil {
		out := make([]string, 0, len(cfg.Roots))
		for _, r := range cfg.Roots {
			if r = resolvePath(r, projectDir); r != "" {
				out = append(out, r)
			}
		}
		return out
	}
	if projectDir == "" {
		return nil
	}
	if cfg.Transport == config.TransportStdio && hasOwnDirectories(cfg, projectDir) {
		return nil
	}
	return []string{projectDir}
}

// hasOwnDirectories reports whether a stdio server is started with a
// directory of its own: an argument, or the value of an --option=value
// argument, that names an existing directory (relative to the server's
// working directory, ~ for the home directory). It errs on the side of
// yes: a server wrongly thought to have directories is offered no roots,
// which takes nothing from it.
//
// A person's own server starts outside the project (launch.go); without a
// cwd of its own, a relative argument such as server-filesystem's "."
// meant the project before, and the project is what its roots give it
// now, so only absolute (and ~) arguments count for it.
func hasOwnDirectories(cfg config.MCPServer, projectDir string) bool {
	cwd := projectDir
	switch {
	case !cfg.FromProject && cfg.Cwd == "":
		cwd = ""
	case !cfg.FromProject:
		cwd = userServerDir(cfg)
	case cfg.Cwd != "":
		cwd = resolvePath(cfg.Cwd, projectDir)
	}
	for _, a := range cfg.Args {
		candidates := []string{a}
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			candidates = []string{v}
		}
		for _, c := range candidates {
			if c == "" {
				continue
			}
			p := resolvePath(c, cwd)
			if p == "" {
				continue
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	return false
}

// resolvePath is p made absolute: ~ and ~/… against the home directory,
// a relative path against base.
func resolvePath(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		if base == "" {
			return ""
		}
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// newClient is the MCP client ralph connects to one server with, offering
// roots (and declaring the capability) only when there are any. The
// roots never change while the server runs, so no change is announced.
// asked, when set, is told when the server asks for the roots (answered
// false) and when ralph has answered (answered true).
func newClient(version string, roots []string, projectDir string, asked func(answered bool)) *sdk.Client {
	caps := &sdk.ClientCapabilities{}
	if len(roots) > 0 {
		caps.RootsV2 = &sdk.RootCapabilities{}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "ralph", Version: version}, &sdk.ClientOptions{Capabilities: caps})
	for _, r := range roots {
		name := filepath.Base(r)
		if r == projectDir {
			name = "project"
		}
		c.AddRoots(&sdk.Root{URI: fileURI(r), Name: name})
	}
	if asked != nil && len(roots) > 0 {
		c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method != "roots/list" {
					return next(ctx, method, req)
				}
				asked(false)
				defer asked(true)
				return next(ctx, method, req)
			}
		})
	}
	return c
}

// rootsSettle is how long a server that asked for its roots while
// starting is given to take them before it counts as ready.
// server-filesystem asks once initialized and applies the answer only
// after checking each directory on disk; a call that came first would
// still see the directories it was started with (or none). The wait is
// paid only by servers that ask, once per start.
const rootsSettle = 200 * time.Millisecond

// rootsAsking marks a server that asked for its roots and is being
// answered. The state settleRoots reads is 0 when the server did not ask
// during its latest start, rootsAsking, or the time (Unix nanoseconds)
// ralph answered.
const rootsAsking = -1

// settleRoots waits, after a start, until a server that asked for its
// roots has had rootsSettle since the answer, or until ctx ends.
func settleRoots(ctx context.Context, state *atomic.Int64) {
	for {
		var wait time.Duration
		switch at := state.Load(); at {
		case 0:
			return
		case rootsAsking:
			wait = 5 * time.Millisecond
		default:
			if wait = time.Until(time.Unix(0, at).Add(rootsSettle)); wait <= 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// fileURI is the file:// URI of an absolute path, escaped as URIs need.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
