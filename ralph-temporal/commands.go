package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/ralph-temporal/engine"
)

func runCmd(conn *engine.Conn) *cobra.Command {
	var pf projectFlags
	var attach bool
	var configFile string
	var backoff, heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Start the project's run on Temporal, or attach to it, and follow it",
		Long: `Start the task loop of the project on Temporal, or attach to the run already
going (the workflow id comes from the remote and the branch, so two starts
are one run), and print its events as JSON lines until it ends, then its
result: {"event": {...}} ... {"result": {...}}. ralph run --engine temporal
execs this and shows the events as a local run's. An interrupt stops the
run: its attempts are cancelled on every worker.

The run's configuration is read as JSON from --config (- for standard
input), as ralph run writes it: {"run": {...}, "prompt": "...",
"max_wait": ...}, with the run's fields as .ralph/session.json holds them.
Without it the run has ralph run's defaults.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := conn.Normalise(); err != nil {
				return err
			}
			start, err := readStart(configFile, os.Stdin)
			if err != nil {
				return usageError{err}
			}
			p, err := pf.find(cmd.Context())
			if err != nil {
				return err
			}
			in, err := runInput(start, p, backoff, heartbeat)
			if err != nil {
				return usageError{err}
			}
			// For tests only, which would rather not run thousands of
			// tasks to see a run continue as new; undocumented in the
			// command's help on purpose.
			if n, err := strconv.Atoi(os.Getenv("RALPH_TEMPORAL_CONTINUE_AFTER_EVENTS")); err == nil && n > 0 {
				in.ContinueAfterEvents = n
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
			case res.Reason == engine.ReasonConfig:
				// A worker refused the run's settings (one that would
				// loosen its own), or the model is configured wrongly.
				return exitCode(exitUsage)
			case res.IsError:
				return exitCode(exitFailed)
			}
			return nil
		},
	}
	pf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "the run's configuration as JSON, as ralph run --engine temporal writes it (- reads standard input)")
	fl.DurationVar(&backoff, "backoff", decide.DefaultBackoff, "the wait before a task's first retry; it doubles after")
	hb := engine.DefaultHeartbeatTimeout
	if d, err := time.ParseDuration(os.Getenv("RALPH_TEMPORAL_HEARTBEAT_TIMEOUT")); err == nil && d > 0 {
		hb = d // for tests that kill a worker and would rather not wait 30 s
	}
	fl.DurationVar(&heartbeat, "heartbeat-timeout", hb, "how long a silent attempt is given before its worker counts as lost (env RALPH_TEMPORAL_HEARTBEAT_TIMEOUT)")
	fl.BoolVar(&attach, "attach", false, "only follow the run going now; start none")
	return cmd
}

// readStart reads the run's configuration: ralph run's defaults when no
// file is named, else the JSON document ralph wrote (- is stdin).
func readStart(name string, stdin io.Reader) (remote.Start, error) {
	start := remote.Start{Run: loop.DefaultRun(), MaxWait: config.DefaultMaxWait}
	if name == "" {
		return start, nil
	}
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return start, fmt.Errorf("--config: %w", err)
		}
		defer f.Close()
		r = f
	}
	dec := json.NewDecoder(r)
	// A field this binary does not know is a setting it would drop.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&start); err != nil {
		return start, fmt.Errorf("--config: the run's configuration is not ralph's JSON: %w", err)
	}
	return start, nil
}

// runInput is the workflow's input for a run configuration: refused in
// one sentence when the loop on Temporal cannot run it, checked as the
// local loop checks it, and otherwise carried whole.
func runInput(start remote.Start, p engine.Project, backoff, heartbeat time.Duration) (engine.RunInput, error) {
	if err := remote.Refused(start.Run); err != nil {
		return engine.RunInput{}, err
	}
	if err := loop.CheckRun(&start.Run); err != nil {
		return engine.RunInput{}, err
	}
	if start.Prompt != "" {
		if _, err := taskprompt.Parse("prompt template", start.Prompt); err != nil {
			return engine.RunInput{}, err
		}
	}
	return engine.RunInput{Project: p, Run: start.Run, Session: start.Session, Prompt: start.Prompt, Backoff: backoff,
		HeartbeatTimeout: heartbeat, MaxWait: start.MaxWait, Ask: start.Ask, AskTimeout: start.AskTimeout}, nil
}

func signalCmd(conn *engine.Conn) *cobra.Command {
	var pf projectFlags
	var urgent bool
	cmd := &cobra.Command{
		Use:   "signal stop|say|pause|continue|answer [TEXT]",
		Short: "Steer the project's run: stop it, say something to its agents, pause or continue it, answer its question (y or n)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctl := engine.Control{Op: args[0], Text: strings.TrimSpace(strings.Join(args[1:], " ")), Urgent: urgent}
			var answer engine.Answer
			switch ctl.Op {
			case remote.OpStop, remote.OpPause, remote.OpContinue:
			case remote.OpSay:
				if ctl.Text == "" {
					return usageError{fmt.Errorf("the message is empty")}
				}
			case remote.OpAnswer:
				// The workflow's questions are the loop's yes/no ones.
				switch strings.ToLower(ctl.Text) {
				case "y", "yes":
					answer.Yes = true
				case "n", "no":
				default:
					return usageError{fmt.Errorf("the run's question is a yes/no one: answer y or n, not %q", ctl.Text)}
				}
			default:
				return usageError{fmt.Errorf("%q is not stop, say, pause, continue or answer", ctl.Op)}
			}
			id, c, err := pf.dial(cmd.Context(), conn)
			if err != nil {
				return err
			}
			defer c.Close()
			if ctl.Op == remote.OpAnswer {
				return engine.SignalAnswerTo(cmd.Context(), c, id, answer)
			}
			return engine.Signal(cmd.Context(), c, id, ctl)
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
			id, c, err := pf.dial(cmd.Context(), conn)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := engine.QueryStatusOf(cmd.Context(), c, id)
			if err != nil {
				return err
			}
			return json.NewEncoder(os.Stdout).Encode(st)
		},
	}
	pf.add(cmd)
	return cmd
}
