package scripts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/memory"
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
			return serve(cmd.Context(), web.Options{Addr: addr, Remote: remote, ReadOnly: readOnly, Fs: afero.NewOsFs(), Sessions: listSessions})
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
	fs := afero.NewOsFs()
	entries, err := memory.OpenRegistry(fs, memory.RegistryDir(os.Getenv)).List()
	if err != nil {
		return nil
	}
	return allSessions(fs, entries)
}

// serve listens on o.Addr, prints the address to open once on stderr, and
// serves until ctx ends.
func serve(ctx context.Context, o web.Options) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// The Host check needs the port really listened on (--addr :0).
	o.Addr = ln.Addr().String()
	if o.Remote {
		fmt.Fprintf(os.Stderr, remoteWarning, o.Addr)
	}
	s, err := web.New(o)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(os.Stderr, "ralph serve: open "+s.URL(o.Addr))
	// Requests end with ctx, so a followed event stream does not hold
	// the shutdown up.
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
