package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/retention"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/spf13/afero"
	"github.com/spf13/cobra"
)

// reportCommand is `ralph report`: the markdown report, or with --html a
// self-contained HTML page.
func (c *cli) reportCommand() *cobra.Command {
	var html bool
	var out string
	cmd := &cobra.Command{
		Use:   "report [session-id]",
		Short: "Write and show a session's report: summary, tasks, timeline, insights, metrics, errors (--html: an HTML page)",
		Long: `Write final-report.md for a session (the latest by default) and show it: its
summary, the tasks it worked on (from its own records, not today's RALPH_TASKS.md),
a timeline of every task (attempts, work time, tokens, cost, commands, verify runs,
files changed), insights, metrics, errors and decisions.

With --html, write one self-contained HTML file instead (report.html in the
session's directory, or -o FILE) and print its path: an SVG timeline of tasks and
agents, the tasks with their cost, the insights and an error table. It loads
nothing from the network; open it in any browser.`,
		Example: `  ralph report
  ralph report --html && xdg-open .ralph/sessions/*/report.html
  ralph report 1a2b3c --html -o run.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out != "" && !html {
				return usageHintf("-o/--output goes with --html")
			}
			r, id, err := c.session(args)
			if err != nil {
				return err
			}
			if html {
				return r.HTMLReport(id, out)
			}
			return r.Report(id)
		},
	}
	cmd.Flags().BoolVar(&html, "html", false, "write a self-contained HTML report with an SVG timeline and print its path")
	cmd.Flags().StringVarP(&out, "output", "o", "", "with --html: where to write it (default: report.html in the session's directory)")
	return cmd
}

// selection adds --last and --all-projects to a command over several
// sessions and resolves its arguments with them.
type selection struct {
	last int
	all  bool
}

func (s *selection) flags(cmd *cobra.Command) {
	cmd.Flags().IntVar(&s.last, "last", 0, "the newest N sessions of this project")
	cmd.Flags().BoolVar(&s.all, "all-projects", false, "with --last: the newest N sessions of every project ralph has worked in")
}

func (c *cli) selectSessions(s selection, args []string) (Records, []SessionRef, error) {
	r, err := c.records()
	if err != nil {
		return r, nil, err
	}
	refs, err := r.SelectSessions(args, s.last, s.all)
	if err != nil {
		if errors.Is(err, ErrBadSelection) {
			return r, nil, usageErrorf("%s", err)
		}
		return r, nil, err
	}
	return r, refs, nil
}

func (c *cli) insightsCommand() *cobra.Command {
	var sel selection
	cmd := &cobra.Command{
		Use:   "insights [session-id...]",
		Short: "The slowest and most retried tasks, commands that fail most, errors by pattern, cost by task and agent",
		Long: `Answer what a run's records can tell: the slowest tasks (by the time their
attempts ran), the most retried, the commands that fail most (run_command calls
and --verify runs), errors grouped by pattern (numbers, paths and hex ids
ignored), and the cost of each task and each agent. Of the latest session by
default, of the sessions named, or of the newest N with --last N (across every
project with --all-projects).`,
		Example: `  ralph insights
  ralph insights --last 5
  ralph insights --json | jq '.slowest_tasks[0]'`,
		RunE: func(_ *cobra.Command, args []string) error {
			r, refs, err := c.selectSessions(sel, args)
			if err != nil {
				return err
			}
			return r.Insights(refs)
		},
	}
	sel.flags(cmd)
	return cmd
}

func (c *cli) compareCommand() *cobra.Command {
	var sel selection
	cmd := &cobra.Command{
		Use:   "compare SESSION SESSION... | --last N",
		Short: "Compare sessions side by side: two, more, or the newest N (--last N, --all-projects)",
		Long: `Compare sessions' duration, turns, tokens, cost, tool calls, errors, retries and
success rates. Two sessions show the change and ratio from the first to the
second; more show a column each and the change from the first to the last.
Session ids may be given in full or as any unique part, and are looked for in
this project and then in every project ralph has worked in. --last N compares
this project's newest N sessions, oldest first; with --all-projects, the newest
N of every project.`,
		Example: `  ralph compare 1a2b3c 4d5e6f
  ralph compare A B C
  ralph compare --last 5 --all-projects`,
		RunE: func(_ *cobra.Command, args []string) error {
			if sel.last == 0 && len(args) < 2 {
				return usageHintf("compare needs two or more sessions, or --last N")
			}
			r, refs, err := c.selectSessions(sel, args)
			if err != nil {
				return err
			}
			return r.Compare(refs)
		},
	}
	sel.flags(cmd)
	return cmd
}

// sessionsSubcommands are `ralph sessions prune` and `ralph sessions
// archive`.
func (c *cli) sessionsSubcommands() []*cobra.Command {
	var olderThan string
	var keep int
	var dryRun bool
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Delete old sessions (and their git checkpoints) by --older-than and --keep, or [retention] in the config",
		Long: `Delete the project's sessions that a retention policy lets go, with their git
checkpoint refs: those not among the newest --keep N and last updated more than
--older-than AGE ago (30d, 2w, 12h). Either flag alone is a policy too. Without
flags the [retention] table of the config is used (keep, older_than), the same
policy ralph applies on its own when a session starts. The running session and
the latest session are never deleted. --dry-run only lists what would go.`,
		Example: `  ralph sessions prune --older-than 30d --keep 20 --dry-run
  ralph sessions prune --keep 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			var policy retention.Policy
			if cmd.Flags().Changed("older-than") || cmd.Flags().Changed("keep") {
				if keep < 0 {
					return usageErrorf("--keep must not be negative, not %d", keep)
				}
				policy.Keep = keep
				if olderThan != "" {
					d, err := retention.ParseAge(olderThan)
					if err != nil {
						return usageErrorf("--older-than: %s", err)
					}
					policy.OlderThan = d
				}
			} else {
				cfg, err := config.Load(config.Sources{Fs: r.Fs, UserFs: r.person(), ProjectRoot: r.Root, UserConfigDir: config.UserConfigDir(), Getenv: os.Getenv})
				if err != nil {
					return usageErrorf("%s", err)
				}
				policy = cfg.Retention
			}
			if !policy.Active() {
				return usageErrorf("nothing to prune by: give --older-than AGE and/or --keep N, or set [retention] in %s", config.ProjectFile)
			}
			return r.Prune(cmd.Context(), policy, dryRun)
		},
	}
	prune.Flags().StringVar(&olderThan, "older-than", "", "prune sessions last updated longer ago than this (30d, 2w, 12h)")
	prune.Flags().IntVar(&keep, "keep", 0, "always keep the newest N sessions")
	prune.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be pruned")
	archive := &cobra.Command{
		Use:   "archive SESSION",
		Short: "Pack a session into .ralph/archive/<id>.tar.gz, keep its summary in the registry, and remove it",
		Long: `Pack a session's records into .ralph/archive/<id>.tar.gz, record a summary of it
(status, mode, model, tokens, cost, tasks, dates, the archive's path) in ralph's
registry, where ralph sessions lists it as archived, and then remove the session
and its git checkpoint refs (the archive's checkpoints.jsonl names their
commits). The running and the latest session cannot be archived.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, id, err := c.session(args)
			if err != nil {
				return err
			}
			err = r.Archive(cmd.Context(), id)
			if errors.Is(err, retention.ErrProtected) || errors.Is(err, memory.ErrNoSession) {
				return usageErrorf("%s", err)
			}
			return err
		},
	}
	return []*cobra.Command{prune, archive, c.mergeCommand()}
}

// Records answers the commands that read and manage a project's records
// without calling any model: init, status, sessions (and their pruning and
// archiving), logs, report, analyze, insights, compare and import. Root is the project; JSON asks for
// machine-readable output.
type Records struct {
	// Fs is the project's door (memory/rootfs) when Root is one project;
	// Person holds the person's own directories (the registry, their
	// config), nil meaning Fs as tests on one in-memory file system have it.
	Fs     afero.Fs
	Person afero.Fs
	Root   string
	JSON   bool
	Term   terminal.Facts
	Out    io.Writer
	Err    io.Writer
	// PID is the ralph the control commands (stop, say, watch…) reach;
	// 0 for the one working in the project (control.Find).
	PID int
}

// Init creates the state files that are missing.
func (r Records) Init() error {
	res, err := memory.InitProject(r.Fs, r.Root, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(res)
	}
	for _, line := range res.Lines() {
		fmt.Fprintln(r.Out, line)
	}
	return nil
}

// Status shows the session, the tasks and the lock.
func (r Records) Status(plan string) error {
	s, err := report.StatusOf(r.Fs, r.Root, plan, time.Now())
	if err != nil {
		return err
	}
	if st := s.Session; st != nil && !memory.Active(st.Status) {
		// A chat open at its prompt let the lock go and saved its session
		// as its last message ended; only its socket says it is open.
		if pid, ok := control.IdleSessions(context.Background(), r.Root)[st.SessionID]; ok {
			s.Idle = &report.IdleChat{PID: pid}
		}
	}
	if r.JSON {
		return r.writeJSON(s)
	}
	fmt.Fprint(r.Out, text.StripControls(s.Text()))
	return nil
}

// Sessions lists every session of every project ralph has worked in,
// newest first: the registry names the projects, each project's
// .ralph/sessions its sessions. project, when set, keeps one project (a
// directory, found as the other commands find theirs); limit, when
// positive, keeps the newest limit.
func (r Records) Sessions(project string, limit int) error {
	reg := memory.OpenRegistry(r.person(), memory.RegistryDir(os.Getenv))
	entries, err := reg.List()
	if err != nil {
		return err
	}
	if project != "" {
		var kept []memory.RegistryEntry
		for _, e := range entries {
			if samePath(e.Root, project) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			// A project the registry does not know (another RALPH_HOME)
			// still has its own records.
			kept = []memory.RegistryEntry{{Root: project}}
		}
		entries = kept
	}
	list := allSessions(r.Fs, entries)
	// Archived sessions are listed too, from the summaries the registry
	// keeps of them.
	archived, _ := reg.Archives()
	for _, a := range archived {
		if project == "" || samePath(a.Root, project) {
			list = append(list, memory.RegistryEntry{Root: a.Root, SessionID: a.SessionID, Status: "archived", Mode: a.Mode, UpdatedAt: a.ArchivedAt,
				Model: a.Model, Turns: a.Turns, CostUSD: a.CostUSD})
		}
	}
	s := report.Sessions(list)
	if r.Term.OutTTY {
		s.Width = r.Term.Width
	}
	if limit > 0 && len(s.Sessions) > limit {
		s.Sessions = s.Sessions[:limit]
	}
	if r.JSON {
		return r.writeJSON(s)
	}
	fmt.Fprint(r.Out, text.StripControls(s.Text()))
	return nil
}

// allSessions expands each project's registry entry into one entry per
// session it keeps; a project whose sessions cannot be read keeps the
// registry's entry, whose status is unknown: the registry records a
// session when it starts, not how it ends.
func allSessions(fs afero.Fs, projects []memory.RegistryEntry) []memory.RegistryEntry {
	var out []memory.RegistryEntry
	for _, p := range projects {
		out = append(out, sessionsOf(fs, p, "")...)
	}
	return out
}

// oneSession is the session id of the project among projects that is
// says is the one, as allSessions lists it, read without the others: ralph
// serve finds the session of every page and event stream it serves so,
// where listing every session of every project made each request's cost
// grow with all the sessions the person ever ran.
func oneSession(fs afero.Fs, projects []memory.RegistryEntry, is func(root string) bool, id string) (memory.RegistryEntry, bool) {
	if id == "" {
		return memory.RegistryEntry{}, false
	}
	for _, p := range projects {
		if !is(p.Root) {
			continue
		}
		if es := sessionsOf(fs, p, id); len(es) > 0 {
			return es[0], true
		}
	}
	return memory.RegistryEntry{}, false
}

// sessionsOf is allSessions of project p alone, or of its session only
// alone when only is not empty: a session the project keeps, as only
// comes from a request in ralph serve.
func sessionsOf(fs afero.Fs, p memory.RegistryEntry, only string) []memory.RegistryEntry {
	p.Status = "unknown"
	ids, err := memory.ListSessions(fs, p.Root)
	if err != nil || len(ids) == 0 {
		if p.SessionID != "" && (only == "" || p.SessionID == only) {
			return []memory.RegistryEntry{p}
		}
		return nil
	}
	var out []memory.RegistryEntry
	for _, id := range ids {
		if only != "" && id != only {
			continue
		}
		if e, ok := sessionEntry(fs, p, id); ok {
			out = append(out, e)
		}
	}
	return out
}

// sessionEntry is the session id of project p (its registry entry, its
// status set to unknown) as the listings show it; false for a session
// opened and left without a word, which they leave out.
func sessionEntry(fs afero.Fs, p memory.RegistryEntry, id string) (memory.RegistryEntry, bool) {
	e := memory.RegistryEntry{Root: p.Root, SessionID: id}
	st, err := memory.LoadSessionState(fs, p.Root, id)
	switch {
	case err == nil && memory.SessionEmpty(fs, p.Root, id):
		return e, false
	case err == nil:
		e.Status, e.Mode, e.UpdatedAt = st.Status, st.Mode, st.UpdatedAt
		e.Model, e.Turns, e.CostUSD = st.Model, st.Turns, st.CostUSD
		e.FirstPrompt = text.OneLine(memory.FirstPrompt(fs, p.Root, id))
	case id == p.SessionID:
		e = p
	}
	return e, true
}

// samePath reports whether two paths name the same directory.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Logs prints a session's events, following a running one: for people,
// as stored (raw), or with --json as lines of the event contract.
func (r Records) Logs(ctx context.Context, id string, follow, raw bool) error {
	if r.JSON && !raw {
		return r.logsJSON(ctx, id, follow)
	}
	return report.WriteLogs(ctx, r.Fs, r.Root, id, r.Out, follow, raw)
}

// Report writes and shows final-report.md.
func (r Records) Report(id string) error {
	md, path, err := report.Report(r.Fs, r.Root, id, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(map[string]string{"session_id": id, "path": path, "markdown": md})
	}
	face := &OneShot{Format: FormatText, Stdout: r.Out, Stderr: r.Err,
		StdoutTTY: r.Term.OutTTY, Color: r.Term.Color, Width: r.Term.Width, Style: r.Term.RenderStyle}
	face.WriteAnswer(md)
	// The report itself is stdout; where it was written goes beside it on
	// stderr, so that piping the report stays clean.
	fmt.Fprintf(r.Err, "ralph: wrote %s\n", shownPath(path))
	return nil
}

// shownPath is path relative to the working directory when it lies
// beneath it (as .ralph/sessions/… usually does), and whole otherwise.
func shownPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// Analyze shows a session's metrics.
func (r Records) Analyze(id string) error {
	a, err := report.Analyze(r.Fs, r.Root, id)
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(a)
	}
	fmt.Fprint(r.Out, text.StripControls(a.Text()))
	return nil
}

// Import merges a ralph-tui prd.json into RALPH_TASKS.md. Its errors are
// bad input.
func (r Records) Import(data []byte) (planfile.ImportResult, error) {
	res, err := planfile.ImportPRD(r.Fs, r.Root, data)
	if err != nil {
		return res, err
	}
	if r.JSON {
		return res, r.writeJSON(res)
	}
	fmt.Fprintf(r.Out, "%s: %d added, %d updated, %d unchanged\n", memory.TasksFile, res.Added, res.Updated, res.Unchanged)
	for _, w := range res.Warnings {
		fmt.Fprintln(r.Err, "ralph: warning: "+w)
	}
	return res, nil
}

func (r Records) writeJSON(v any) error {
	enc := json.NewEncoder(r.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// StatusGraph prints the order in which ralph run would take the open
// tasks (each done at its first attempt): most urgent first, and among
// equals the one that unblocks the most; then what keeps other tasks from
// ever starting. report.PlanGraph orders them, for ralph serve's pages too.
func (r Records) StatusGraph(plan string) error {
	g, err := report.PlanGraph(r.Fs, r.Root, plan)
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(struct {
			Order    []report.GraphStep `json:"order"`
			Problems []string           `json:"problems"`
		}{g.Order, g.Problems})
	}
	var b strings.Builder
	if len(g.Order) == 0 {
		b.WriteString(g.NothingToStart() + "\n")
	}
	for i, s := range g.Order {
		fmt.Fprintf(&b, "%3d. %s  %s (priority %d", i+1, s.ID, s.Title, s.Priority)
		if len(s.Depends) > 0 {
			fmt.Fprintf(&b, ", after %s", strings.Join(s.Depends, ", "))
		}
		b.WriteString(")\n")
	}
	for _, p := range g.Problems {
		b.WriteString("! " + p + "\n")
	}
	fmt.Fprint(r.Out, text.StripControls(b.String()))
	return nil
}

// Plans lists the project's plans with their tasks and state (ralph
// plans).
func (r Records) Plans() error {
	cfgDir := ""
	if cfg, err := config.Load(config.Sources{Fs: r.Fs, UserFs: r.person(), ProjectRoot: r.Root, UserConfigDir: config.UserConfigDir(), Getenv: os.Getenv}); err == nil {
		cfgDir = cfg.PlansDir
	}
	plans, err := planfile.ListPlans(r.Fs, r.Root, planfile.PlansDir(r.Fs, r.Root, cfgDir))
	if err != nil {
		return err
	}
	if r.JSON {
		if plans == nil {
			plans = []planfile.PlanInfo{}
		}
		return r.writeJSON(plans)
	}
	if len(plans) == 0 {
		fmt.Fprintf(r.Out, "No plans: write RALPH_TASKS.md (ralph init, ralph plan \"feature\") or put plan files in %s.\n",
			planfile.PlansDir(r.Fs, r.Root, cfgDir))
		return nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tFORMAT\tDONE\tOPEN\tFAILED\tSTATE\tSESSION")
	for _, p := range plans {
		if p.Err != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tunreadable: %s\t\n", p.Name, p.Err)
			continue
		}
		state := p.Status
		if len(p.Problems) > 0 {
			state += " (cannot finish: see ralph plans --graph " + p.Name + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%s\n", p.Name, p.Format, p.Tasks.Done, p.Tasks.Total,
			p.Tasks.Open+p.Tasks.InProgress, p.Tasks.Failed, state, p.Session)
	}
	_ = tw.Flush()
	fmt.Fprint(r.Out, text.StripControls(b.String()))
	return nil
}

// person is the file system of the person's own directories.
func (r Records) person() afero.Fs {
	if r.Person != nil {
		return r.Person
	}
	return r.Fs
}
