package cli

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// conventionFlags are the flags people type because Claude Code or codex
// take them (docs/conventions.md); each maps onto a mechanism ralph
// already has.
type conventionFlags struct {
	print          bool
	resume         string
	allowed        []string
	disallowed     []string
	permissionMode string
	appendSystem   string
	addDirs        []string
	verbose        bool
	forkSession    bool
	// skipPermissions is Claude Code's --dangerously-skip-permissions.
	skipPermissions bool
	// agent is --agent of a conversation: def:NAME, an agent definition
	// the conversation's agent follows (as claude --agent NAME).
	agent string
	// conv is what the flags settle into for project.Open.
	conv project.Conventions
}

// pickSession is --resume's value when no id follows it (no session id
// is a bare word: ids start with their time).
const pickSession = "pick"

// Permission modes (--permission-mode), in Claude Code's names.
var permissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"}

func (c *cli) addConventionFlags(root *cobra.Command) {
	cf := &c.f.conv
	pf := root.PersistentFlags()
	root.Flags().BoolVarP(&cf.print, "print", "p", false, "run the task and print the answer, never the chat shell (as claude -p)")
	root.Flags().StringVarP(&cf.resume, "resume", "r", "", "continue the session with this `ID` (ralph sessions lists them); without one, pick it on a terminal (-r as Claude Code's)")
	root.Flags().Lookup("resume").NoOptDefVal = pickSession
	root.Flags().StringVar(&cf.agent, "agent", "", "follow an agent definition ("+strings.Join(agents.DefinitionDirs(), ", ")+" of the project or your home): def:`NAME` (its prompt, tools and model)")
	root.Flags().BoolVar(&cf.forkSession, "fork-session", false, "with -c or --resume: continue in a copy of the session under a new id, leaving the original as it was")
	pf.StringArrayVar(&cf.allowed, "allowed-tools", nil, `tools that run without asking, e.g. "Bash(go test:*) Edit" (ralph's approval rules, for this run)`)
	pf.StringArrayVar(&cf.disallowed, "disallowed-tools", nil, `tools that are refused, e.g. "Bash(git push:*) Write"`)
	// Claude Code's own spellings, kept out of the help so it shows one
	// name for each.
	pf.StringArrayVar(&cf.allowed, "allowedTools", nil, "")
	pf.StringArrayVar(&cf.disallowed, "disallowedTools", nil, "")
	_ = pf.MarkHidden("allowedTools")
	_ = pf.MarkHidden("disallowedTools")
	pf.StringVar(&cf.permissionMode, "permission-mode", "", "default, acceptEdits, plan (read-only), bypassPermissions (as --yes) or dontAsk (refuse what no rule allows)")
	pf.StringVar(&cf.appendSystem, "append-system-prompt", "", "text added to the end of the system prompt")
	pf.StringArrayVar(&cf.addDirs, "add-dir", nil, "another directory the model may read and write, by absolute path (repeatable)")
	pf.BoolVarP(&cf.verbose, "verbose", "v", false, "show each step on stderr, also when it is not a terminal")
	// Claude Code's way of saying -y --sandbox danger-full-access, taken
	// with its warning but kept out of the help, which names ralph's own.
	pf.BoolVar(&cf.skipPermissions, "dangerously-skip-permissions", false, "-y --sandbox danger-full-access (Claude Code's spelling)")
	_ = pf.MarkHidden("dangerously-skip-permissions")
}

// skipPermissionsWarning is said on every run with
// --dangerously-skip-permissions, in the words Claude Code warns with.
const skipPermissionsWarning = "ralph: WARNING: with --dangerously-skip-permissions (-y --sandbox danger-full-access) ralph will not ask for your approval before running potentially dangerous commands and runs them outside the sandbox, so use it only in a container or VM that has restricted internet access and can easily be restored if damaged."

// settleConventions turns the convention flags into ralph's settings; an
// error is bad input (exit 2) before anything runs.
func (c *cli) settleConventions(cmd *cobra.Command) error {
	f, cf := &c.f, &c.f.conv
	switch cf.permissionMode {
	case "", "default", "acceptEdits":
		// ralph never asks about file edits: both are its default.
	case "plan":
		if cmd.Flags().Changed("sandbox") && f.sandbox != string(sandbox.ReadOnly) {
			return usageErrorf("--permission-mode plan is read-only and cannot go with --sandbox %s", f.sandbox)
		}
		f.sandbox = string(sandbox.ReadOnly)
	case "bypassPermissions":
		f.yes = true
	case "dontAsk":
		cf.conv.NeverAsk, f.noWait = true, true
	default:
		return usageErrorf("--permission-mode %q is not one of %s", cf.permissionMode, strings.Join(permissionModes, ", "))
	}
	if cf.skipPermissions {
		full := string(sandbox.FullAccess)
		if f.sandbox != "" && f.sandbox != full {
			return usageErrorf("--dangerously-skip-permissions runs commands outside the sandbox and cannot go with --sandbox %s", f.sandbox)
		}
		f.yes, f.sandbox = true, full
		fmt.Fprintln(os.Stderr, skipPermissionsWarning)
	}
	rules, err := approval.ParseToolRules(cf.allowed, cf.disallowed)
	if err != nil {
		return usageErrorf("%s", err)
	}
	for _, d := range cf.addDirs {
		// Checked here so a mistyped directory stops ralph before a
		// session is recorded; the tools check it again when they root
		// themselves in it.
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return usageErrorf("--add-dir %s is not a directory", d)
		}
	}
	cf.conv.Tools, cf.conv.AppendSystem, cf.conv.AddDirs = rules, cf.appendSystem, cf.addDirs
	cf.conv.StartDir = f.dir
	if cf.forkSession && !f.cont && f.session == "" && cf.resume == "" {
		return usageErrorf("--fork-session goes with -c or --resume: it continues a copy of the session they name")
	}
	cf.conv.ForkSession = cf.forkSession
	if cf.agent != "" {
		name, ok, err := agentdefs.ParseSpec(agentdefs.AsSpec(cf.agent, func(v string) error { _, err := agents.Parse(v); return err }))
		switch {
		case err != nil:
			return usageErrorf("%s", err)
		case !ok:
			return usageErrorf("--agent here takes an agent definition, NAME or def:NAME; an external CLI (%s) works tasks with ralph run --agent", agents.Choices())
		}
		cf.conv.Definition = name
	}
	return nil
}

// resumeArgs settles --resume: an id given after it (the flag takes its
// value only as --resume=ID, so a following word that names a session is
// the id), a session picked at the terminal, or bad input.
func (c *cli) resumeArgs(args []string) ([]string, error) {
	cf := &c.f.conv
	if cf.resume == "" {
		return args, nil
	}
	r, err := c.records()
	if err != nil {
		return args, err
	}
	id := cf.resume
	if id == pickSession {
		id = ""
		if len(args) > 0 && !strings.ContainsAny(args[0], " \t\n") {
			found, err := memory.FindSession(r.Fs, r.Root, args[0])
			switch {
			case err == nil:
				id, args = found, args[1:]
			case len(args) > 1 || !c.term.InTTY || !c.term.ErrTTY:
				// A word with a prompt after it, or with no terminal to
				// pick at, was meant as the id: say it matches nothing
				// (and what is near) rather than that no id was given.
				return args, usageErrorf("--resume %s: %s", args[0], err)
			}
		}
	}
	if id == "" {
		if !c.term.InTTY || !c.term.ErrTTY {
			return args, usageErrorf("--resume needs a session id when there is no terminal to pick one at; `ralph sessions` lists them")
		}
		if id, err = pickFromTerminal(r); err != nil {
			return args, err
		}
	}
	if _, err := memory.FindSession(r.Fs, r.Root, id); err != nil {
		return args, usageErrorf("%s", err)
	}
	c.f.session = id
	return args, nil
}

// pickFromTerminal lists the newest sessions and reads the person's pick,
// as chat's /resume lists them (view.Resumable, view.DescribeSession).
func pickFromTerminal(r Records) (string, error) {
	shown, err := view.Resumable(r.Fs, r.Root)
	if err != nil {
		return "", err
	}
	if len(shown) == 0 {
		return "", usageErrorf("this project has no sessions to resume yet")
	}
	fmt.Fprintln(os.Stderr, "Sessions, newest first:")
	now := time.Now()
	for i, id := range shown {
		fmt.Fprintf(os.Stderr, "  %2d) %s\n", i+1, view.DescribeSession(r.Fs, r.Root, id, now, r.Term.Width))
	}
	fmt.Fprint(os.Stderr, "Resume which? [1] ")
	tty, err := openTTY()
	if err != nil {
		return "", fmt.Errorf("cannot read the terminal: %w", err)
	}
	defer tty.Close()
	line, _ := bufio.NewReader(tty).ReadString('\n')
	line = strings.TrimSpace(line)
	n := 1
	if line != "" {
		if n, err = strconv.Atoi(line); err != nil || n < 1 || n > len(shown) {
			return "", usageErrorf("%q is not a number from 1 to %d", line, len(shown))
		}
	}
	return shown[n-1], nil
}

// globalFlagsNote replaces cobra's "Global Flags" section in every
// subcommand's help: the model, sandbox and approval flags are listed
// once, in ralph --help, instead of twenty lines under every command.
const globalFlagsNote = `

Global flags (-C, -m, --base-url, -y, -s, --json, ...) work here too; ralph --help lists them.`

// trimSubcommandHelp gives every subcommand a usage without the global
// flags (see globalFlagsNote).
func trimSubcommandHelp(root *cobra.Command) {
	tmpl := strings.Replace(root.UsageTemplate(), `{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`, `{{if .HasAvailableInheritedFlags}}`+globalFlagsNote+`{{end}}`, 1)
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			sub.SetUsageTemplate(tmpl)
			walk(sub)
		}
	}
	walk(root)
}

// hintTaskWords makes every command's argument check say how to send a
// task that starts with the command's name: `ralph continue working on
// the parser` is a task to a person, not `ralph continue` with three
// stray words.
func hintTaskWords(root *cobra.Command) {
	for _, sub := range root.Commands() {
		check := sub.Args
		if check == nil {
			continue
		}
		name := sub.Name()
		sub.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err == nil || len(args) == 0 {
				return err
			}
			task := name + " " + strings.Join(args, " ")
			return usageHintf("%s; did you mean `ralph -- %s`? (words after -- are a task, even a command's name)", err, task)
		}
	}
}
