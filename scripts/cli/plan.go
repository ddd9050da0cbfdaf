package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/contract"
	"github.com/ralph-dev/ralph/scripts/screen/render"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// PlanHelp is `ralph plan --help`.
const PlanHelp = `Talk a feature into a plan: ralph's coordinator reads the project (its
structure, tests, RALPH_GOALS.md and the task list), asks you what it cannot
find out, and writes the plan: the feature's goals as a section of
RALPH_GOALS.md, and its tasks into RALPH_TASKS.md in the task list's own
grammar (ids, priorities, depends=, acceptance criteria and a verify command
as notes: "Verify: ` + "`CMD`" + ` passes", which ralph run runs for that task after its
--verify, the task done only if it passes), every line already there kept.

Nothing else is written: the session runs with --sandbox read-only, and the
plan goes through one tool, write_plan. On a terminal ralph then shows the
plan, in the order ralph run would take it, and asks:
  a  accept it (and, if you like, start ralph run)
  r  revise it: say what should change ("split task 3", anything)
  e  edit RALPH_TASKS.md in $VISUAL or $EDITOR
  d  drop it: both files are put back byte for byte
The same question waits for ralph answer (a, d, or "r: what should change")
and ralph serve's page: the first answer wins, and the terminal says so.
Without a terminal, in CI, or with --json, the plan is written and printed
(as JSON with --json) without asking. Exit 1 when the model wrote no plan.`

const planExamples = `  ralph plan "add a cache in front of the database"
  ralph plan --json "support Windows line endings" | jq .tasks
  ralph plan --base-url http://127.0.0.1:11434 -m qwen3 "rate limiting"`

// addPlanCommand wires `ralph plan` and `ralph plans`.
func (c *cli) addPlanCommand(root *cobra.Command) {
	var graph string
	plans := &cobra.Command{
		Use:   "plans",
		Short: "List the project's plans (RALPH_TASKS.md and plans_dir) with their tasks and state; --graph PLAN its order",
		Long: `List the plans ralph run can work: RALPH_TASKS.md and every markdown or JSON
file of plans_dir (config; docs/plans when it exists, else .ralph/plans), each
with its format (ralph's task list, a ralphex plan, a ralph-tui prd.json), its
task counts, and the newest session that worked it; in a project with a Beads
database, its epics too, as beads:ID. ralph run PLAN works one;
a plan whose session stopped before its end (paused, interrupted) goes on in
that session. With --graph PLAN, print the order ralph run would take PLAN's
tasks in, and what keeps any of them from ever starting.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			if graph != "" {
				plan := graph
				if _, beads := planfile.BeadsEpic(graph); !beads {
					if plan, err = c.planName(r, graph); err != nil {
						return usageErrorf("%s", err)
					}
				}
				return planUsage(r.StatusGraph(plan))
			}
			return r.Plans()
		},
	}
	plans.Flags().StringVar(&graph, "graph", "", "print the order ralph run would take this plan's tasks in")
	root.AddCommand(plans)
	var tracker string
	plan := &cobra.Command{
		Use:     "plan FEATURE",
		Short:   "Talk a feature into goals and a task list (RALPH_TASKS.md) that ralph run then works through",
		Long:    PlanHelp,
		Example: planExamples,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch tracker {
			case "", config.TrackerFiles, config.TrackerBeads:
			default:
				return usageErrorf("--tracker must be %s or %s, not %q", config.TrackerFiles, config.TrackerBeads, tracker)
			}
			return exit(c.plan(cmd.Context(), strings.Join(args, " "), tracker == config.TrackerBeads))
		},
	}
	plan.Flags().StringVar(&tracker, "tracker", "", "where the plan goes: files (RALPH_TASKS.md, the default) or beads (an epic with its tasks and dependencies, through bd)")
	root.AddCommand(plan)
}

// planUsage makes a plan that cannot be read bad input (exit 2).
func planUsage(err error) error {
	if errors.Is(err, planfile.ErrPlan) {
		return usageErrorf("%s", err)
	}
	return err
}

// plan is `ralph plan "feature"`; toBeads writes the plan into Beads.
func (c *cli) plan(ctx context.Context, feature string, toBeads bool) int {
	face, code := c.oneShotFace(c.format())
	if code != 0 {
		return code
	}
	face.Verbose = c.f.conv.verbose
	if strings.TrimSpace(feature) == "" {
		return face.Fail(ExitUsage, errors.New("no feature given: ralph plan \"what to build\""))
	}
	if toBeads {
		// Where the plan goes is checked as ralph run checks the plan
		// it works: before the model is asked for it, and before the
		// project opens, so a failure leaves no file behind.
		r, err := c.records()
		if err == nil {
			err = trackerReady(r, planfile.BeadsPlan)
		}
		if err != nil {
			return face.Fail(project.ExitCode(err), err)
		}
	}
	// Planning reads; the plan is written by write_plan alone.
	c.f.sandbox = string(sandbox.ReadOnly)
	p, err := c.open(ctx, project.ModePlan, false, nil, nil)
	if err != nil {
		return face.Fail(project.ExitCode(err), err)
	}
	run := false
	var export func(*tools.Plan) (string, error)
	epic := ""
	if toBeads {
		export = func(plan *tools.Plan) (string, error) {
			var err error
			epic, err = beadsPlan(p.Root, plan)
			return epic, err
		}
	}
	code = PlanMain(ctx, p, face, feature, func() { run = true }, export)
	p.Close()
	if run {
		return c.runAfterPlan(ctx, epic)
	}
	return code
}

// beadsPlan writes an accepted plan into Beads as an epic with its tasks
// and their dependencies, and returns the epic's id.
func beadsPlan(root string, plan *tools.Plan) (string, error) {
	var tasks []planfile.BeadsPlanTask
	for _, t := range plan.Tasks {
		notes := []string{strings.TrimSpace(t.Description)}
		for _, c := range t.AcceptanceCriteria {
			notes = append(notes, "- "+strings.TrimSpace(c))
		}
		if t.Verify != "" {
			notes = append(notes, "Verify: `"+t.Verify+"` passes")
		}
		tasks = append(tasks, planfile.BeadsPlanTask{ID: t.ID, Title: t.Title, Priority: t.Priority, DependsOn: t.DependsOn,
			Notes: strings.TrimSpace(strings.Join(notes, "\n"))})
	}
	return planfile.WriteBeadsPlan(root, plan.Title, plan.Goals, tasks)
}

// runAfterPlan starts `ralph run` on the accepted plan (the Beads epic,
// when there is one), in a process of its own (the plan's session and
// lock are closed by then), with the flags this one was given.
func (c *cli) runAfterPlan(ctx context.Context, epic string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: cannot start ralph run: %v\n", err)
		return ExitFailed
	}
	args := []string{"run"}
	if epic != "" {
		args = append(args, "--tracker", config.TrackerBeads, "--epic", epic)
	}
	if c.f.baseURL != "" {
		args = append(args, "--base-url", c.f.baseURL)
	}
	if c.f.model != "" {
		args = append(args, "--model", c.f.model)
	}
	if c.f.provider != "" {
		args = append(args, "--provider", c.f.provider)
	}
	if c.f.thinkingTokens != 0 {
		args = append(args, "--thinking-tokens", strconv.Itoa(c.f.thinkingTokens))
	}
	if c.f.yes {
		args = append(args, "--yes")
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.f.dir, os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "ralph: ralph run: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// PlanMain plans a feature on an opened project: the conversation, then on
// a terminal the person's accept, revise, edit or drop. accept, when the
// person wants the plan run now, is called before PlanMain returns.
// export, when not nil, writes the accepted plan elsewhere (Beads) and
// returns where; RALPH_TASKS.md and RALPH_GOALS.md are then put back.
func PlanMain(ctx context.Context, p *project.Project, face *OneShot, feature string, accept func(), export func(*tools.Plan) (string, error)) int {
	pw, err := p.StartPlan()
	if err != nil {
		return face.Fail(ExitFailed, err)
	}
	face.Model, face.Provider, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Config.Provider, p.Root, p.Config.Style
	face.Start()
	defer face.Close()
	at := p.Attach(ctx, project.Face{Handle: face.Handle, Notify: face.Notify, Asker: face.Asker(), Signals: true})
	defer at.Detach()
	_, ci := project.InCI(os.Getenv)
	ask := face.asks != nil && face.Format == FormatText && !ci
	// The person's words are the prompt, recorded and listed as theirs;
	// what ralph asks of the model about them goes before them as a note.
	at.Coord.AddNote(tools.PlanNote() + "\n")
	res := at.Coord.Run(ctx, feature)
	// finish ends an accepted plan: written and shown, or, with export,
	// written there and taken out of the files.
	finish := func(plan *tools.Plan) int {
		if export == nil {
			return face.finishPlan(p, plan, res)
		}
		epic, err := export(plan)
		if err != nil {
			// A failed command leaves no plan files behind; the plan
			// stays in the session's transcript.
			if derr := pw.Drop(); derr != nil {
				err = errors.Join(err, derr)
			}
			p.EndOneShot(err)
			return face.Fail(project.ExitCode(err), err)
		}
		if err := pw.Drop(); err != nil {
			return face.Fail(ExitFailed, err)
		}
		return face.finishBeadsPlan(plan, epic, res)
	}
	for {
		if res.IsError {
			return face.Finish(res)
		}
		plan := pw.Plan()
		if plan == nil {
			// The conversation ended well, and its record says so; the
			// command did not, and exits 1: the session is recorded
			// failed with the reason, as status and sessions should show
			// it.
			p.EndOneShot(fmt.Errorf("the model wrote no plan (it never called %s)", tools.ToolWritePlan))
			face.Close()
			fmt.Fprintf(face.Stderr, "ralph: the model wrote no plan (it never called %s); its answer was: %s\n",
				tools.ToolWritePlan, text.StripControls(strings.TrimSpace(res.Text)))
			return ExitFailed
		}
		if !ask {
			return finish(plan)
		}
		choice, err := askPlan(ctx, face, at.Questions, p, plan)
		if err != nil {
			// The terminal closed or the person stopped: the plan stays
			// written, as it would after accept.
			return finish(plan)
		}
		if !choice.terminal {
			// The person at the terminal saw the question; they see it
			// was answered elsewhere.
			face.Notify(choice.note)
		}
		switch choice.answer.key {
		case "a":
			return acceptPlan(ctx, face, plan, choice.terminal, export != nil, finish, accept)
		case "r":
			// A revision is words: given with the answer from elsewhere
			// ("r: split task 3"), asked for on a line of its own at the
			// terminal.
			what := choice.answer.words
			if what == "" {
				if what, err = face.asks.ask(ctx, "What should change?", ">", false); err != nil || strings.TrimSpace(what) == "" {
					continue
				}
			}
			at.Coord.AddNote(tools.RevisePlanNote())
			res = at.Coord.Run(ctx, what)
		case "e":
			if err := editFile(ctx, filepath.Join(p.Root, memory.TasksFile)); err != nil {
				face.Notify(err.Error())
			}
		case "d":
			if err := pw.Drop(); err != nil {
				return face.Fail(ExitFailed, err)
			}
			face.Notify(fmt.Sprintf("dropped the plan: %s and %s are as they were", memory.TasksFile, memory.GoalsFile))
			return ExitOK
		default:
			face.Notify("answer a, r, e or d")
		}
	}
}

// acceptPlan ends the plan the person accepted: exported through finish
// when it goes elsewhere (otherwise it is written already), and started
// with ralph run when the person at the terminal says so.
func acceptPlan(ctx context.Context, face *OneShot, plan *tools.Plan, atTerminal, exported bool, finish func(*tools.Plan) int, accept func()) int {
	if exported {
		if code := finish(plan); code != ExitOK {
			return code
		}
	} else {
		face.Notify(fmt.Sprintf("the plan is in %s (%s) and %s", memory.TasksFile, text.Counted(len(plan.Tasks), "task", "tasks"), memory.GoalsFile))
	}
	// Accepted elsewhere, nobody may be at the terminal to say
	// whether to start it: it is not started.
	if atTerminal {
		if yes, err := face.asks.askKey(ctx, "Start it now with ralph run?", "[y/N]", yesNo, false); err == nil && isYes(yes) {
			accept()
			return ExitOK
		}
	}
	if exported {
		face.Notify("start it when you like, with the command said above")
	} else {
		face.Notify("start it when you like with: ralph run")
	}
	return ExitOK
}

// planChoices are the keys of the plan's question; without a terminal
// the words work too, and an empty line accepts.
var planChoices = terminal.KeyQuestion{Keys: "ared"}

func isYes(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "y" || s == "yes"
}

// editFile opens path in the person's editor ($VISUAL, $EDITOR, else vi)
// on the terminal, and waits for it.
func editFile(ctx context.Context, path string) error {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	// The editor may carry arguments ("code --wait"), as git allows.
	// The editor is the person's program: the shell finds it off the
	// project's PATH entries, as every program ralph starts for itself.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", editor+` "$@"`, editor, path)
	cmd.Env = childenv.PersonEnv(os.Environ())
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot open the terminal for the editor: %w", err)
	}
	defer tty.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the editor (%s) failed: %w", editor, err)
	}
	return nil
}

// planMarkdown is the plan as a person reads it: the goals, then every
// open task of the task list in the order ralph run would take them (the
// file is read again, so an edit shows). The tasks are introduced by a
// line in bold, not a second-level heading, which the terminal's
// markdown styles draw with its "##" in front.
func planMarkdown(p *project.Project, plan *tools.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n**Tasks, in the order ralph run takes them:**\n\n", plan.Title, strings.TrimSpace(plan.Goals))
	tf, err := planfile.LoadTasks(p.Fs, p.Root)
	if err != nil {
		return b.String() + err.Error() + "\n"
	}
	for i, t := range tf.Order() {
		fmt.Fprintf(&b, "%d. **%s** %s", i+1, t.ID, t.Title)
		if len(t.Depends) > 0 {
			fmt.Fprintf(&b, " _(after %s)_", strings.Join(t.Depends, ", "))
		}
		b.WriteString("\n")
		if notes := strings.TrimSpace(tf.Notes(t.ID)); notes != "" {
			for _, l := range strings.Split(notes, "\n") {
				b.WriteString("   " + l + "\n")
			}
		}
	}
	for _, w := range append(plan.Warnings, tf.GraphProblems()...) {
		b.WriteString("\n> " + w + "\n")
	}
	return b.String()
}

// showPlan is the plan for the terminal: rendered, without any control
// sequence of the model's.
func (o *OneShot) showPlan(p *project.Project, plan *tools.Plan) string {
	md := planMarkdown(p, plan)
	if !o.StdoutTTY {
		return text.StripControls(md)
	}
	style := ""
	if o.Color && o.Style != nil {
		style = o.Style(o.ConfiguredStyle)
	}
	return render.Markdown(text.StripControls(md), render.Options{Width: o.Width, Color: o.Color, Style: style})
}

// planResult is `ralph plan --json`'s one object.
type planResult struct {
	// Type is "plan".
	Type string `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion contract.Version `json:"schema_version"`
	// SessionID is the planning session.
	SessionID string `json:"session_id"`
	// TasksFile and GoalsFile are the files the plan was written to
	// (absent when it was written into Beads).
	TasksFile string `json:"tasks_file,omitempty"`
	GoalsFile string `json:"goals_file,omitempty"`
	// Epic is the Beads epic the plan was written into (--tracker beads).
	Epic string `json:"epic,omitempty"`
	// Plan is the plan as the model gave it.
	Plan *tools.Plan `json:"plan"`
	// Order is the task list's ids in the order ralph run takes them.
	Order []string `json:"order"`
	// Problems are what is wrong with the order: a dependency on no
	// task, a cycle.
	Problems []string `json:"problems,omitempty"`
	// Summary is the planner's last words.
	Summary string `json:"summary"`
}

// finishBeadsPlan ends a plan written into Beads as the epic: the JSON
// object, or a sentence saying where it is.
func (o *OneShot) finishBeadsPlan(plan *tools.Plan, epic string, res event.Result) int {
	if o.Format == FormatJSON || o.Format == FormatStreamJSON {
		o.Close()
		out := planResult{Type: "plan", SessionID: res.SessionID, Epic: epic, Plan: plan, Summary: res.Text}
		o.enc.value(out)
		return ExitOK
	}
	o.Notify(fmt.Sprintf("the plan is in Beads as the epic %s (%s); start it with: ralph run --tracker beads --epic %s", epic, text.Counted(len(plan.Tasks), "task", "tasks"), epic))
	return ExitOK
}

// finishPlan ends a plan that is written and not asked about: the JSON
// object, or the plan as text.
func (o *OneShot) finishPlan(p *project.Project, plan *tools.Plan, res event.Result) int {
	o.Close()
	if o.Format == FormatJSON || o.Format == FormatStreamJSON {
		out := planResult{Type: "plan", SessionID: res.SessionID, TasksFile: memory.TasksFile, GoalsFile: memory.GoalsFile,
			Plan: plan, Summary: res.Text}
		if tf, err := planfile.LoadTasks(p.Fs, p.Root); err == nil {
			for _, t := range tf.Order() {
				out.Order = append(out.Order, t.ID)
			}
			out.Problems = tf.GraphProblems()
		}
		o.enc.value(out)
		return ExitOK
	}
	fmt.Fprint(o.Stdout, o.showPlan(p, plan))
	o.Notify(fmt.Sprintf("the plan is in %s and %s; start it with: ralph run", memory.TasksFile, memory.GoalsFile))
	return ExitOK
}
