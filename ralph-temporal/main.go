// ralph-temporal runs ralph's task loop on Temporal. It is a binary of its
// own so that ralph itself links no Temporal SDK (which costs about 16 ms
// of start-up and 10 MB): `ralph run --engine temporal` execs it and reads
// its event stream.
//
//	ralph-temporal worker --address HOST:PORT   run task attempts on this machine
//	ralph-temporal run    --address HOST:PORT   start or attach to the project's run
//	ralph-temporal signal --address HOST:PORT stop|say|pause|continue|answer [TEXT]
//	ralph-temporal query  --address HOST:PORT status
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ralph-dev/ralph/ralph-temporal/engine"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Exit codes, as ralph's: 2 is bad input, 1 a failure.
const (
	exitFailed = 1
	exitUsage  = 2
)

type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func main() {
	// The sandbox runs the agents' commands through a helper: this binary
	// started again with the helper's argument, as ralph does.
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var conn engine.Conn
	root := &cobra.Command{
		Use:   "ralph-temporal",
		Short: "ralph's task loop on Temporal: workers, and the client side ralph execs",
		Long: `ralph-temporal runs ralph's task loop on Temporal: the loop is a workflow,
each task attempt an activity on some worker, and one integration activity
at a time merges finished branches into the target branch of the project's
git remote and updates RALPH_TASKS.md and RALPH_PROGRESS.md there.

Start workers on the machines that should do the work, then start a run
from the project with ralph run --engine temporal (which execs this binary).

An API key (Temporal Cloud) is read from $` + engine.APIKeyEnv + ` only; it is never written
to disk. --tls, --tls-cert and --tls-key configure TLS.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&conn.Address, "address", "", "the Temporal frontend, HOST:PORT")
	pf.StringVar(&conn.Namespace, "namespace", "default", "the Temporal namespace")
	pf.StringVar(&conn.TaskQueue, "task-queue", engine.DefaultTaskQueue, "the task queue runs and workers meet on")
	pf.BoolVar(&conn.TLS, "tls", false, "connect with TLS (on by itself with a client certificate or $"+engine.APIKeyEnv+")")
	pf.StringVar(&conn.CertFile, "tls-cert", "", "client certificate file for mTLS")
	pf.StringVar(&conn.KeyFile, "tls-key", "", "client key file for mTLS")
	pf.StringVar(&conn.ServerName, "tls-server-name", "", "the name the server's certificate is checked against")
	root.AddCommand(workerCmd(&conn), runCmd(&conn), signalCmd(&conn), queryCmd(&conn))
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	var code exitCode
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &ue), errors.Is(err, engine.ErrConfig):
		fmt.Fprintf(os.Stderr, "ralph-temporal: %s\n", err)
		return exitUsage
	default:
		fmt.Fprintf(os.Stderr, "ralph-temporal: %s\n", err)
		return exitFailed
	}
}

type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func workerCmd(conn *engine.Conn) *cobra.Command {
	var o engine.WorkerOptions
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run task attempts and integrations for runs on the task queue, until stopped",
		Long: `Run task attempts and integrations on this machine for every run on the
task queue, until SIGINT or SIGTERM. Each attempt clones or fetches the
project's git remote under --dir, works in a worktree on the branch
ralph/<task-id> with ralph's agents, sandbox and --verify, and pushes that
branch. The model is configured as for ralph itself: OPENAI_API_KEY,
OPENAI_BASE_URL, RALPH_MODEL or ~/.config/ralph/config.toml on this machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Conn = *conn
			return engine.RunWorker(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Dir, "dir", "", "where clones and worktrees live (default: ./ralph-temporal-work)")
	fl.IntVar(&o.Parallel, "parallel", 4, "task attempts at once on this worker")
	return cmd
}

// projectFlags are the flags that name the project a client command acts
// on: its checkout, or its remote and branch.
type projectFlags struct{ dir, remote, branch string }

func (p *projectFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&p.dir, "dir", "C", ".", "the project's checkout (its remote origin and branch name the run)")
	fl.StringVar(&p.remote, "remote", "", "the git remote the workers fetch from and push to (default: the checkout's origin)")
	fl.StringVar(&p.branch, "branch", "", "the target branch (default: the checkout's current branch)")
}

func (p projectFlags) find(ctx context.Context) (engine.Project, error) {
	return engine.Discover(ctx, p.dir, p.remote, p.branch)
}

// dial finds the project and connects to the Temporal server, for the
// commands that act on a run already there: it returns the run's
// workflow id and the client, which the caller closes.
func (p projectFlags) dial(ctx context.Context, conn *engine.Conn) (string, client.Client, error) {
	proj, err := p.find(ctx)
	if err != nil {
		return "", nil, err
	}
	c, err := conn.Dial()
	if err != nil {
		return "", nil, err
	}
	return proj.WorkflowID(), c, nil
}
