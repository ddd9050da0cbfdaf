package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/sessionhooks"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
)

// HooksHelp is `ralph hooks`' long help.
const HooksHelp = `Hooks are commands that run when something happens in a session (before a
tool call, after one, when a turn ends, when the session starts), written as
Claude Code writes them. ralph reads them from your config ([[hooks.EVENT]]
tables), ~/.claude/settings.json (unless claude_hooks = false), the project's
.ralph/config.toml, .claude/settings.json and .claude/settings.local.json, and
plugins. "disableAllHooks": true in one of your files turns every hook off; in
one of the project's, the project's hooks only.

Your own hooks run. A hook of the project's files or of a plugin inside the
project runs only once you approved it on this machine, as it is now: its
command and the content of every file the command names (the script it runs).
ralph asks at the session's first hook event when it can ask you; where nobody
can (CI, no terminal, a Temporal worker), a PreToolUse guard that is not
approved refuses the calls it matches, and any other such hook does not run.
ralph hooks approve approves them here. See docs/hooks.md.`

// addHooksCommands wires `ralph hooks`: list the hooks and approve the
// project's.
func (c *cli) addHooksCommands(root *cobra.Command) {
	run := func(fn func(h HooksCommands, args []string) error) func(*cobra.Command, []string) error {
		return func(_ *cobra.Command, args []string) error {
			return c.inProject(func(door *rootfs.Fs, dir string) error {
				added, _ := project.AddedPlugins(door, dir)
				return fn(HooksCommands{Fs: door, Person: rootfs.Person(), Root: dir, Plugins: sessionhooks.FromPlugins(added), JSON: c.f.json, Out: c.stdout(), Getenv: os.Getenv}, args)
			})
		}
	}
	hooksCmd := &cobra.Command{
		Use:   "hooks",
		Short: "List the hooks (Claude Code's protocol) and whether each runs; approve the project's",
		Long:  HooksHelp,
		Example: `  ralph hooks
  ralph hooks --json | jq '.hooks[] | select(.state != "runs")'
  ralph hooks approve`,
		Args: cobra.NoArgs,
		RunE: run(func(h HooksCommands, _ []string) error { return h.List() }),
	}
	approve := &cobra.Command{
		Use:   "approve [N...]",
		Short: "Approve the project's hooks that wait for approval (all, or those numbered as ralph hooks lists them)",
		Long: `Approve, on this machine, the project's hooks (and those of plugins inside the
project) that wait for approval: every one, or those numbered N as ralph hooks
lists them. Each is approved as it is now: its command and the content of
every file the command names, all of which this prints. If the project
changes any of it, it must be approved again. Without N it also approves the
env of the project's settings files (ralph hooks lists it), as it is now, which ralph then gives the commands that run in the sandbox (as
Claude Code gives it in a workspace you trust). The record is
~/.config/ralph/approved_commands.json.`,
		Example: `  ralph hooks approve
  ralph hooks approve 2 3`,
		RunE: run(func(h HooksCommands, args []string) error { return h.Approve(args) }),
	}
	hooksCmd.AddCommand(approve)
	root.AddCommand(hooksCmd)
}

// HooksCommands are `ralph hooks` and its subcommands.
type HooksCommands struct {
	Fs, Person afero.Fs
	Root       string
	// Plugins are the plugin directories whose hooks are read.
	Plugins []sessionhooks.Plugin
	JSON    bool
	Out     io.Writer
	Getenv  func(string) string
}

func (h HooksCommands) load() (sessionhooks.Loaded, error) {
	cfg, err := config.Load(config.Sources{Fs: h.Fs, UserFs: h.Person, ProjectRoot: h.Root, UserConfigDir: config.UserConfigDir(), Getenv: h.Getenv})
	if err != nil {
		return sessionhooks.Loaded{}, err
	}
	home, _ := os.UserHomeDir()
	return sessionhooks.Load(sessionhooks.Sources{Root: h.Root, Fs: h.Fs, Person: h.Person, Home: home,
		UserConfigDir: config.UserConfigDir(), Config: cfg, Plugins: h.Plugins}), nil
}

// hookRow is one hook as `ralph hooks --json` lists it.
type hookRow struct {
	N       int    `json:"n"`
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	Command string `json:"command"`
	// If is the hook's "if" condition (Claude Code's permission-rule
	// syntax, on the tool events), "" when it runs on every match: two
	// hooks of one matcher and command that differ only by it would
	// otherwise read as the same unconditional line.
	If      string   `json:"if,omitempty"`
	Source  string   `json:"source"`
	File    string   `json:"file"`
	State   string   `json:"state"`
	Sandbox bool     `json:"sandbox"`
	Files   []string `json:"files,omitempty"`
}

// List prints every hook with its event, matcher, command, file and
// state.
func (h HooksCommands) List() error {
	l, err := h.load()
	if err != nil {
		return err
	}
	rows := make([]hookRow, 0, len(l.Entries))
	for i, e := range l.Entries {
		r := hookRow{N: i + 1, Event: string(e.Hook.Event), Matcher: e.Hook.Matcher, Command: e.Hook.Command, If: e.Hook.If, Source: string(e.Hook.Source),
			File: e.Hook.File, State: string(e.State), Sandbox: !e.Hook.Unsandboxed}
		if e.State == sessionhooks.Waiting {
			if changes := approval.HookChanges(h.Person, config.UserConfigDir(), h.Root, *e.Review); len(changes) > 0 {
				r.State += " (changed since you approved it: " + strings.Join(changes, "; ") + ")"
			}
			if h.Getenv("CI") != "" {
				// The session's policy refuses where nobody can be asked;
				// CI is the case a listing can know of.
				r.State = "refused: nobody to approve (CI=" + h.Getenv("CI") + "); " + r.State
			}
		}
		if e.Review != nil {
			for _, f := range e.Review.Files {
				r.Files = append(r.Files, f.Path)
			}
		}
		rows = append(rows, r)
	}
	notes := append(append([]string{}, l.Warnings...), l.Ignored...)
	if n := l.DisabledNote(); n != "" {
		notes = append(notes, n)
	}
	if h.JSON {
		enc := json.NewEncoder(h.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"hooks": rows, "envs": envRows(l.ProjectEnvs), "notes": nonNil(notes)})
	}
	for _, n := range notes {
		fmt.Fprintln(h.Out, "note: "+text.Visible(n))
	}
	for _, e := range envRows(l.ProjectEnvs) {
		fmt.Fprintf(h.Out, "env of %s: %s; %s\n", text.Visible(e.File), text.Visible(strings.Join(e.Names, ", ")), e.State)
	}
	if len(rows) == 0 {
		fmt.Fprintln(h.Out, "no hooks: ralph reads them from your config, ~/.claude/settings.json, the project's .claude/settings.json, .claude/settings.local.json and .ralph/config.toml, and plugins")
		return nil
	}
	for _, r := range rows {
		matcher := r.Matcher
		if matcher == "" {
			matcher = "*"
		}
		where := "in the sandbox"
		if !r.Sandbox {
			where = "outside the sandbox"
		}
		cond := ""
		if r.If != "" {
			cond = " if " + text.Visible(r.If)
		}
		fmt.Fprintf(h.Out, "%d. %s %s%s: %s\n   from %s (%s), %s; %s\n", r.N, text.Visible(r.Event), text.Visible(matcher), cond, text.Visible(r.Command),
			text.Visible(r.File), r.Source, where, r.State)
		for _, f := range r.Files {
			fmt.Fprintln(h.Out, "   runs file "+text.Visible(f))
		}
	}
	waiting := 0
	for _, e := range l.Entries {
		if e.State == sessionhooks.Waiting {
			waiting++
		}
	}
	if waiting > 0 {
		fmt.Fprintf(h.Out, "%d waiting for approval: ralph hooks approve approves them on this machine\n", waiting)
	}
	return nil
}

// Approve records the person's approval of the project's hooks that
// wait for it: all, or those numbered in args.
func (h HooksCommands) Approve(args []string) error {
	l, err := h.load()
	if err != nil {
		return err
	}
	want := map[int]bool{}
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > len(l.Entries) {
			return usagef("%q is not the number of a hook; ralph hooks lists them, numbered", a)
		}
		want[n] = true
	}
	done := 0
	for i, e := range l.Entries {
		if len(want) > 0 && !want[i+1] {
			continue
		}
		if e.Review == nil {
			if len(want) > 0 {
				fmt.Fprintf(h.Out, "hook %d is yours (%s) and needs no approval\n", i+1, e.Hook.File)
			}
			continue
		}
		if e.State != sessionhooks.Waiting {
			if len(want) > 0 {
				fmt.Fprintf(h.Out, "hook %d is approved already\n", i+1)
			}
			continue
		}
		changes := approval.HookChanges(h.Person, config.UserConfigDir(), h.Root, *e.Review)
		if err := approval.TrustHook(h.Person, config.UserConfigDir(), h.Root, *e.Review); err != nil {
			return fmt.Errorf("approving hook %d: %w", i+1, err)
		}
		done++
		fmt.Fprintf(h.Out, "approved hook %d on this machine: %s\n", i+1, text.Visible(e.Hook.Command))
		if len(changes) > 0 {
			fmt.Fprintln(h.Out, "  changed since you approved it before:")
			for _, c := range changes {
				fmt.Fprintln(h.Out, "    "+c)
			}
		}
		for _, s := range e.Review.Shown() {
			fmt.Fprintln(h.Out, "  "+s)
		}
	}
	if len(want) == 0 {
		n, err := h.approveEnvs(l.ProjectEnvs)
		if err != nil {
			return err
		}
		done += n
	}
	if done == 0 && len(want) == 0 {
		fmt.Fprintln(h.Out, "no hook waits for approval")
	}
	return nil
}

// envRow is a project settings file's env as `ralph hooks` lists it.
type envRow struct {
	File  string   `json:"file"`
	Names []string `json:"names"`
	State string   `json:"state"`
}

func envRows(envs []sessionhooks.ProjectEnv) []envRow {
	out := []envRow{}
	for _, e := range envs {
		state := string(sessionhooks.Runs) + " (given to sandboxed commands)"
		if !e.Approved {
			state = string(sessionhooks.Waiting)
		}
		out = append(out, envRow{File: e.File, Names: e.Names(), State: state})
	}
	return out
}

// approveEnvs records the person's approval of the env of the project's
// settings files that wait for it, as they are now; `ralph hooks
// approve` without numbers approves them with the hooks, as Claude
// Code's workspace trust covers both.
func (h HooksCommands) approveEnvs(envs []sessionhooks.ProjectEnv) (int, error) {
	done := 0
	for _, e := range envs {
		if e.Approved {
			continue
		}
		if err := approval.TrustHook(h.Person, config.UserConfigDir(), h.Root, e.Review); err != nil {
			return done, fmt.Errorf("approving the env of %s: %w", e.File, err)
		}
		done++
		fmt.Fprintf(h.Out, "approved the env of %s on this machine, for the sandboxed commands: %s\n", text.Visible(e.File), text.Visible(e.Review.Command))
	}
	return done, nil
}
