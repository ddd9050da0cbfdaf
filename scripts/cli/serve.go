package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/ralph-dev/ralph/scripts/temporal"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/web"
)

// ServeHelp is the help of ralph serve.
const ServeHelp = `Serve a web view of every project and session ralph knows (the registry
ralph sessions lists): status, mode, model, turns, tokens, cost, age and
whether it runs now; a session's events as ralph watch prints them, live
while it runs, its answers rendered from markdown; and, unless --read-only,
stop, pause, continue, say and the answer to the question it waits on, sent
as ralph stop, pause, continue, say and answer send them.

It listens on 127.0.0.1:7777 (--addr) and prints, once on stderr, the
address to open with its token; every request needs that token, which is
kept in memory only. A --addr beyond the loopback interface needs
--allow-remote. docs/web.md has the security rules.`

// remoteWarning is the one sentence a non-loopback --addr is served with.
const remoteWarning = "ralph serve: listening beyond this machine: anyone who can reach %s and holds the token can read every session's prompts, answers, commands and files ralph shows, and steer the running ralphs unless --read-only\n"

func (c *cli) serveCommand() *cobra.Command {
	var addr string
	var readOnly, allowRemote bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "A web view of every ralph, live, that can steer the running ones (token-guarded, loopback by default)",
		Long:  ServeHelp,
		Example: `  ralph serve
  ralph serve --read-only --addr 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			remote := !web.IsLoopback(addr)
			if remote && !allowRemote {
				return usageErrorf("--addr %s is not a loopback address: add --allow-remote to serve it beyond this machine", addr)
			}
			return serve(cmd.Context(), web.Options{Addr: addr, Remote: remote, ReadOnly: readOnly, Fs: rootfs.NewProjects(), Sessions: listSessions, Session: findSession})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7777", "the address to listen on, host:port (port 0: any free one)")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "serve the views only: no stop, pause, continue, say or answer")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow an --addr beyond the loopback interface")
	return cmd
}

// listSessions is every session of every project, as ralph sessions
// lists them.
func listSessions() []memory.RegistryEntry {
	fs := rootfs.NewProjects()
	return allSessions(fs, registered(fs))
}

// findSession is the one session listSessions would list under its
// project's key and its id.
func findSession(key, id string) (memory.RegistryEntry, bool) {
	fs := rootfs.NewProjects()
	return oneSession(fs, registered(fs), keyIs(key), id)
}

// keyIs says of a project's root whether key is its key in ralph serve's
// addresses.
func keyIs(key string) func(root string) bool {
	return func(root string) bool { return web.ProjectKey(root) == key }
}

// registered is the projects ralph's registry knows.
func registered(fs afero.Fs) []memory.RegistryEntry {
	entries, err := memory.OpenRegistry(fs, memory.RegistryDir(os.Getenv)).List()
	if err != nil {
		return nil
	}
	return entries
}

// addServeCommands wires ralph serve, and --serve on ralph run, ralph
// chat and a one-shot (the root command), which serve that one project
// while they work. It comes after the commands it adds the flag to.
func (c *cli) addServeCommands(root *cobra.Command) {
	root.AddCommand(c.serveCommand())
	c.addServeFlag(root)
	for _, cmd := range root.Commands() {
		if cmd.Name() == "run" || cmd.Name() == "chat" {
			c.addServeFlag(cmd)
		}
	}
}

// addServeFlag gives cmd --serve[=ADDR]: before it runs, the web view of
// its project listens (any free loopback port by default, so two runs
// never collide) and its URL is printed once on stderr, before chat's
// prompt is drawn, so the line does not cut into it; it stops when the
// command returns.
func (c *cli) addServeFlag(cmd *cobra.Command) {
	var addr string
	fl := cmd.Flags()
	fl.StringVar(&addr, "serve", "", "serve this project's web view while it works, to follow and steer it from a browser (ralph serve's pages; any free loopback port, or =ADDR)")
	fl.Lookup("serve").NoOptDefVal = "127.0.0.1:0"
	inner := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if addr == "" {
			return inner(cmd, args)
		}
		if !web.IsLoopback(addr) {
			return usageErrorf("--serve=%s is not a loopback address; ralph serve --allow-remote serves beyond this machine", addr)
		}
		root, err := c.root()
		if err != nil {
			return usageErrorf("%s", err)
		}
		fs, err := rootfs.New(root)
		if err != nil {
			return usageErrorf("%s", err)
		}
		project := []memory.RegistryEntry{{Root: root}}
		sessions := func() []memory.RegistryEntry { return allSessions(fs, project) }
		session := func(key, id string) (memory.RegistryEntry, bool) {
			return oneSession(fs, project, keyIs(key), id)
		}
		wait, err := startWeb(cmd.Context(), web.Options{Addr: addr, Fs: fs, Sessions: sessions, Session: session})
		if err != nil {
			return err
		}
		defer wait()
		return inner(cmd, args)
	}
}

// serve serves until ctx ends.
func serve(ctx context.Context, o web.Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait, err := startWeb(ctx, o)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return wait()
}

// startWeb listens on o.Addr, prints the address to open once on stderr,
// and serves in the background; the returned wait stops the server and
// says how serving went.
func startWeb(ctx context.Context, o web.Options) (wait func() error, err error) {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	// The Host check needs the port really listened on (--addr :0).
	o.Addr = ln.Addr().String()
	o.Fleet = func(ctx context.Context, root string) (remote.Status, bool, error) {
		return temporal.Fleet(ctx, o.Fs, root)
	}
	if o.Remote {
		fmt.Fprintf(os.Stderr, remoteWarning, o.Addr)
	}
	s, err := web.New(o)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(os.Stderr, "ralph serve: open "+s.URL(o.Addr))
	ctx, cancel := context.WithCancel(ctx)
	// Requests end with ctx, so a followed event stream does not hold
	// the shutdown up.
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	return func() error {
		cancel()
		sctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
		defer stop()
		_ = hs.Shutdown(sctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	}, nil
}
