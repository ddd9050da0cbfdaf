package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/remote"
)

// addControlCommands wires the commands that steer and watch a ralph
// running in the project from another terminal, through its control
// socket. Their names are commands, not tasks: `ralph -- stop` sends the
// word to the model.
func (c *cli) addControlCommands(root *cobra.Command) {
	var urgent bool
	say := &cobra.Command{
		Use:   "say MESSAGE",
		Short: "Send a message to the running ralph, delivered at its next step boundary (--urgent: at once)",
		Long: `Send a message to the ralph running in this project, as if typed at its
terminal while it works: delivered at the next step boundary, the way the
model reads it best; with --urgent it cuts the current step short and the
model reads it next. In ralph run the message goes to the agents working
tasks (or the next task started). The chat shell takes it only while it
works; at its prompt, type it there.

` + SteerHelp,
		Example: `  ralph say "use the existing helper in util.go"
  ralph say --urgent "stop editing main.go, it is generated"`,
		Args: cobra.MinimumNArgs(1),
		RunE: c.steer(func(args []string) (control.Request, error) {
			text := strings.TrimSpace(strings.Join(args, " "))
			if text == "" {
				return control.Request{}, usageErrorf("the message is empty")
			}
			return control.Request{Op: remote.OpSay, Text: text, Urgent: urgent}, nil
		}),
	}
	say.Flags().BoolVar(&urgent, "urgent", false, "cut the current step short: the model reads the message next")
	var id int
	answer := &cobra.Command{
		Use:   "answer y|n|always|TEXT",
		Short: "Answer the question the running ralph waits on (an approval, a yes/no question, the model's question)",
		Long: `Answer the question the ralph running in this project waits on: whether to
run a command (y runs it once, n refuses it, always runs it and remembers its
rule, exactly as "always" at its terminal, and only where that offers it),
a yes/no question of the task loop, or the model's own question (ask_user),
which takes your words or a choice's number. ralph status and ralph watch
show the waiting question, its number and the command that answers it; with
--id the answer goes to that question only, never to one asked after it.

Without a terminal, ralph run waits for the answer (its status says
waiting_for_input) up to --answer-timeout; a one-shot or script waits only
with --wait-for-answers, and nothing waits in CI.

` + SteerHelp,
		Example: `  ralph status            # shows the question and its number
  ralph answer --id 3 y
  ralph answer "use Redis, it is already deployed"
  ralph answer 2           # the second of the question's choices`,
		Args: cobra.MinimumNArgs(1),
		RunE: c.steer(func(args []string) (control.Request, error) {
			a, err := ParseAnswer(strings.Join(args, " "))
			if err != nil {
				return control.Request{}, usageErrorf("%s", err)
			}
			if id < 0 {
				return control.Request{}, usageErrorf("--id must be a question's number, not %d", id)
			}
			return control.Request{Op: remote.OpAnswer, Text: a, QuestionID: id}, nil
		}),
	}
	answer.Flags().IntVar(&id, "id", 0, "the number of the question to answer (ralph status shows it)")
	simple := func(use, short, long string, op string) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Long: long + "\n\n" + SteerHelp, Args: cobra.NoArgs,
			RunE: c.steer(func([]string) (control.Request, error) { return control.Request{Op: op}, nil }),
		}
	}
	watch := c.watchCommand()
	stop := simple("stop", "Hard-stop the running ralph, as Ctrl-C at its terminal would",
		`Hard-stop the ralph running in this project, as Ctrl-C (SIGINT) does: the work
in flight is cancelled, in-progress tasks go back to open, the state is saved,
and the run exits 130 (ralph run on a terminal too: it does not switch into
chat, which is for the person at that terminal). The chat shell stops its work
and stays open. ralph resume continues afterwards.`, remote.OpStop)
	pause := simple("pause", "Pause the running task loop: no new task starts, the ones in flight finish",
		`Pause the task loop of the ralph running in this project (ralph run, or /run
in chat or a script): no new task starts, the tasks in flight finish, and
the session says paused. ralph continue lets it go on.`, remote.OpPause)
	cont := simple("continue", "Let a paused task loop go on",
		`Let the paused task loop of the ralph running in this project go on with
its next task.`, remote.OpContinue)
	for _, cmd := range []*cobra.Command{stop, say, pause, cont, answer, watch} {
		cmd.Flags().Int("pid", 0, "the ralph to reach, by its process id, when more than one runs in this project")
	}
	root.AddCommand(stop, say, pause, cont, answer, watch)
}

// steer is the RunE of a control command: it sends the request build
// makes of the arguments to the ralph running in the project (on
// Temporal, through its workflow) and exits as the answer says.
func (c *cli) steer(build func(args []string) (control.Request, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		req, err := build(args)
		if err != nil {
			return err
		}
		r, err := c.records()
		if err != nil {
			return err
		}
		if r.PID, err = pidFlag(cmd); err != nil {
			return err
		}
		if m, ok := r.TemporalMarker(); ok {
			return exit(r.SteerTemporal(cmd.Context(), m, req))
		}
		return exit(r.Steer(cmd.Context(), req))
	}
}

// watchCommand is `ralph watch`: the running ralph's live view, or its
// events as stream-json.
func (c *cli) watchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "watch",
		Short: "A live view of the running ralph (or the last session): tasks, agents, events, cost, questions",
		Long:  WatchHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			if r.PID, err = pidFlag(cmd); err != nil {
				return err
			}
			if f := c.f.outputFormat; f != FormatText && f != FormatStreamJSON {
				return usageErrorf("ralph watch prints text or stream-json (--json), not %s", f)
			}
			// --json (the shorthand every command takes) means the events
			// as stream-json here: a watch has no single result object.
			if m, ok := r.TemporalMarker(); ok {
				return r.WatchTemporal(cmd.Context(), m, c.f.json || c.f.outputFormat == FormatStreamJSON)
			}
			if err := r.Watch(cmd.Context(), c.f.json || c.f.outputFormat == FormatStreamJSON); err != nil {
				return fmt.Errorf("watch: %w", err)
			}
			return nil
		},
	}
}

// pidFlag is the --pid of a control command: a process id, or 0.
func pidFlag(cmd *cobra.Command) (int, error) {
	pid, err := cmd.Flags().GetInt("pid")
	if err != nil {
		return 0, err
	}
	if pid < 0 {
		return 0, usageErrorf("--pid must be a process id, not %d", pid)
	}
	return pid, nil
}
