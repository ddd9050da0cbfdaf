package main

import (
	"encoding/json"
	"fmt"
	"github.com/ralph-dev/ralph/workers/agents"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/ralph-temporal/engine"
)

func runCmd(conn *engine.Conn) *cobra.Command {
	var pf projectFlags
	var in engine.RunInput
	var attach bool
	d := loop.DefaultRun()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Start the project's run on Temporal, or attach to it, and follow it",
		Long: `Start the task loop of the project on Temporal, or attach to the run already
going (the workflow id comes from the remote and the branch, so two starts
are one run), and print its events as JSON lines until it ends, then its
result: {"event": {...}} ... {"result": {...}}. ralph run --engine temporal
execs this and shows the events as a local run's. An interrupt stops the
run: its attempts are cancelled on every worker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := conn.Normalise(); err != nil {
				return err
			}
			p, err := pf.find(cmd.Context())
			if err != nil {
				return err
			}
			in.Project = p
			rc := d
			rc.MaxIterations, rc.OnError, rc.Retries, rc.Until, rc.Breaker, rc.Agent, rc.AgentArgs = in.Policy.MaxIterations, in.Policy.OnError, in.Policy.Retries, in.Until, in.Breaker, in.Agent, in.AgentArgs
			rc.Parallel, rc.MaxCost = in.Policy.Parallel, in.MaxCost
			if err := loop.CheckRun(&rc); err != nil {
				return usageError{err}
			}
			c, err := conn.Dial()
			if err != nil {
				return err
			}
			defer c.Close()
			var run client.WorkflowRun
			if attach {
				run = c.GetWorkflow(cmd.Context(), p.WorkflowID(), "")
			} else if run, err = engine.Start(cmd.Context(), c, conn.TaskQueue, in); err != nil {
				return fmt.Errorf("cannot start the run: %w", err)
			}
			res, err := engine.Follow(cmd.Context(), c, run, os.Stdout)
			if err != nil {
				return err
			}
			switch {
			case res.Reason == decide.ReasonInterrupted:
				return exitCode(130)
			case res.IsError:
				return exitCode(exitFailed)
			}
			return nil
		},
	}
	pf.add(cmd)
	fl := cmd.Flags()
	fl.IntVar(&in.Policy.MaxIterations, "max-iterations", d.MaxIterations, "stop after this many task attempts")
	fl.IntVar(&in.Policy.Parallel, "parallel", 1, "tasks worked at once, across all workers")
	fl.StringVar(&in.Policy.OnError, "on-error", d.OnError, "after a failed attempt: retry, skip (mark failed) or abort")
	fl.IntVar(&in.Policy.Retries, "retries", d.Retries, "with --on-error retry: attempts after the first before a task is marked failed")
	fl.DurationVar(&in.Policy.Backoff, "backoff", decide.DefaultBackoff, "the wait before a task's first retry; it doubles after")
	fl.DurationVar(&in.Policy.BreakerCooldown, "breaker-cooldown", time.Duration(d.BreakerCooldown), "how long the tripped circuit breaker waits before it lets one task through")
	fl.StringVar(&in.Verify, "verify", "", "command that must pass in the task's worktree before a task counts as done")
	fl.StringVar(&in.Agent, "agent", "", "work tasks with an external CLI: "+agents.Choices())
	fl.StringArrayVar(&in.AgentArgs, "agent-arg", nil, "one more argument for the external agent (repeatable)")
	fl.DurationVar(&in.TaskTimeout, "task-timeout", time.Duration(d.TaskTimeout), "time limit of one task attempt")
	fl.Float64Var(&in.MaxCost, "max-cost", 0, "stop when the known cost in USD reaches this (0: no limit)")
	fl.StringVar(&in.Until, "until", "", "stop, successfully, once this condition holds")
	fl.StringVar(&in.Breaker, "breaker", "", "circuit breaker condition")
	fl.DurationVar(&in.MaxWait, "max-wait", config.DefaultMaxWait, "longest wait for a rate or usage limit to reset (0: never wait)")
	hb := engine.DefaultHeartbeatTimeout
	if d, err := time.ParseDuration(os.Getenv("RALPH_TEMPORAL_HEARTBEAT_TIMEOUT")); err == nil && d > 0 {
		hb = d // for tests that kill a worker and would rather not wait 30 s
	}
	fl.DurationVar(&in.HeartbeatTimeout, "heartbeat-timeout", hb, "how long a silent attempt is given before its worker counts as lost (env RALPH_TEMPORAL_HEARTBEAT_TIMEOUT)")
	fl.BoolVar(&attach, "attach", false, "only follow the run going now; start none")
	return cmd
}

func signalCmd(conn *engine.Conn) *cobra.Command {
	var pf projectFlags
	var urgent bool
	cmd := &cobra.Command{
		Use:   "signal stop|say|pause|continue [TEXT]",
		Short: "Steer the project's run: stop it, say something to its agents, pause or continue it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctl := engine.Control{Op: args[0], Text: strings.TrimSpace(strings.Join(args[1:], " ")), Urgent: urgent}
			switch ctl.Op {
			case engine.OpStop, engine.OpPause, engine.OpContinue:
			case engine.OpSay:
				if ctl.Text == "" {
					return usageError{fmt.Errorf("the message is empty")}
				}
			default:
				return usageError{fmt.Errorf("%q is not stop, say, pause or continue", ctl.Op)}
			}
			p, err := pf.find(cmd.Context())
			if err != nil {
				return err
			}
			c, err := conn.Dial()
			if err != nil {
				return err
			}
			defer c.Close()
			return engine.Signal(cmd.Context(), c, p.WorkflowID(), ctl)
		},
	}
	pf.add(cmd)
	cmd.Flags().BoolVar(&urgent, "urgent", false, "with say: cut the agents' current step short")
	return cmd
}

func queryCmd(conn *engine.Conn) *cobra.Command {
	var pf projectFlags
	cmd := &cobra.Command{
		Use:   "query status",
		Short: "Print the project's run's status as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != engine.QueryStatus {
				return usageError{fmt.Errorf("%q is not a query; the one query is status", args[0])}
			}
			p, err := pf.find(cmd.Context())
			if err != nil {
				return err
			}
			c, err := conn.Dial()
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := engine.QueryStatusOf(cmd.Context(), c, p.WorkflowID())
			if err != nil {
				return err
			}
			return json.NewEncoder(os.Stdout).Encode(st)
		},
	}
	pf.add(cmd)
	return cmd
}
