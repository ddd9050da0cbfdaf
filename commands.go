package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts"
	"github.com/ralph-dev/ralph/scripts/report"
)

// addSessionCommands wires the commands that read and manage a project's
// state: none of them calls a model.
func addSessionCommands(root *cobra.Command, f *flags) {
	run := func(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("max-retries") {
				f.maxRetries = -1
			}
			return fn(cmd, args)
		}
	}
	resume := &cobra.Command{
		Use:   "resume [session-id]",
		Short: "Continue an interrupted session (the latest by default)",
		Long: `Continue a session from its last saved step: after a Ctrl-C, a crash or a kill.
Tool calls that were running when ralph stopped are reported to the model as
"unknown outcome", so it checks before repeating them; nothing already done
is done again. A session id may be given in full or as a unique part.`,
		Args: cobra.MaximumNArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			g := *f
			g.resume = true
			if len(args) == 1 {
				g.session = args[0]
			}
			// A task-loop session resumes the loop; any other continues
			// the conversation.
			if sessionMode(g) == "run" {
				if code := runLoop(cmd.Context(), g, runFlags{resume: true, maxIterations: 100, onError: "retry", retries: 2, taskTimeout: 30 * time.Minute}); code != 0 {
					return exitError{code}
				}
				return nil
			}
			if code := oneShot(cmd.Context(), g, "", cmd); code != 0 {
				return exitError{code}
			}
			return nil
		}),
	}
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create AGENT.md, RALPH_GOALS.md, RALPH_TASKS.md, RALPH_PROGRESS.md and RALPH_TODO.md",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := projectDir(f.dir)
			if err != nil {
				return usageErrorf("%s", err)
			}
			res, err := memory.InitProject(afero.NewOsFs(), root, time.Now())
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(res)
			}
			for _, p := range res.Created {
				fmt.Printf("created  %s\n", p)
			}
			for _, p := range res.Existing {
				fmt.Printf("kept     %s (already there)\n", p)
			}
			if len(res.Info.Languages) > 0 {
				fmt.Printf("detected %s", strings.Join(res.Info.Languages, ", "))
				if len(res.Info.Test) > 0 {
					fmt.Printf("; tests: %s", res.Info.Test[0])
				}
				fmt.Println()
			}
			return nil
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the project's session, tasks and lock (no model call)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := projectDir(f.dir)
			if err != nil {
				return usageErrorf("%s", err)
			}
			r, err := report.Status(afero.NewOsFs(), root, time.Now())
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(r)
			}
			fmt.Print(r.Text())
			return nil
		},
	}
	sessions := &cobra.Command{
		Use:   "sessions",
		Short: "List the projects and sessions ralph has worked on, across projects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			entries, err := memory.OpenRegistry(afero.NewOsFs(), memory.RegistryDir(os.Getenv)).List()
			if err != nil {
				return err
			}
			r := report.Sessions(entries)
			if f.json {
				return writeJSON(r)
			}
			fmt.Print(r.Text())
			return nil
		},
	}
	var follow, raw bool
	logs := &cobra.Command{
		Use:   "logs [session-id]",
		Short: "Show a session's events (the latest by default); -f follows a running one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, id, err := sessionArg(f, args)
			if err != nil {
				return err
			}
			return report.WriteLogs(cmd.Context(), afero.NewOsFs(), root, id, os.Stdout, follow, raw || f.json)
		},
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events while the session runs")
	logs.Flags().BoolVar(&raw, "raw", false, "print the events as JSON lines")
	reportCmd := &cobra.Command{
		Use:   "report [session-id]",
		Short: "Write and show final-report.md for a session: summary, tasks, metrics, errors, interruptions",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, id, err := sessionArg(f, args)
			if err != nil {
				return err
			}
			md, path, err := report.Report(afero.NewOsFs(), root, id, time.Now())
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(map[string]string{"session_id": id, "path": path, "markdown": md})
			}
			writeMarkdown(md, f)
			return nil
		},
	}
	analyze := &cobra.Command{
		Use:   "analyze [session-id]",
		Short: "Duration, turns, tokens, cost, tool use, errors and success rate of a session",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, id, err := sessionArg(f, args)
			if err != nil {
				return err
			}
			a, err := report.Analyze(afero.NewOsFs(), root, id)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(a)
			}
			fmt.Print(a.Text())
			return nil
		},
	}
	compare := &cobra.Command{
		Use:   "compare SESSION_A SESSION_B",
		Short: "Compare two sessions side by side",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var as [2]report.Analysis
			for i := range args {
				root, id, err := sessionArg(f, args[i:i+1])
				if err != nil {
					return err
				}
				if as[i], err = report.Analyze(afero.NewOsFs(), root, id); err != nil {
					return err
				}
			}
			c := report.Compare(as[0], as[1])
			if f.json {
				return writeJSON(c)
			}
			fmt.Print(c.Text())
			return nil
		},
	}
	importCmd := &cobra.Command{
		Use:   "import prd.json",
		Short: "Import ralph-tui's prd.json user stories into RALPH_TASKS.md",
		Long: `Import the userStories of a ralph-tui prd.json into RALPH_TASKS.md: one task per
story, done when it passes, with its priority and dependsOn as ralph's priority
and depends. Importing again updates the same tasks instead of adding them twice;
every other line of the task file is kept as it is.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := projectDir(f.dir)
			if err != nil {
				return usageErrorf("%s", err)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageErrorf("cannot read %s: %s", args[0], err)
			}
			res, err := memory.ImportPRD(afero.NewOsFs(), root, data)
			if err != nil {
				return usageErrorf("%s: %s", args[0], err)
			}
			if f.json {
				return writeJSON(res)
			}
			fmt.Printf("%s: %d added, %d updated, %d unchanged\n", memory.TasksFile, res.Added, res.Updated, res.Unchanged)
			for _, w := range res.Warnings {
				fmt.Fprintln(os.Stderr, "ralph: warning: "+w)
			}
			return nil
		},
	}
	root.AddCommand(resume, initCmd, status, sessions, logs, reportCmd, analyze, compare, importCmd)
}

// sessionMode is the mode of the session a resume would continue, or "".
func sessionMode(f flags) string {
	root, err := projectDir(f.dir)
	if err != nil {
		return ""
	}
	fs := afero.NewOsFs()
	id, err := memory.FindSession(fs, root, f.session)
	if err != nil {
		return ""
	}
	st, err := memory.LoadSessionState(fs, root, id)
	if err != nil {
		return ""
	}
	return st.Mode
}

// sessionArg resolves the project and an optional session id argument.
func sessionArg(f *flags, args []string) (string, string, error) {
	root, err := projectDir(f.dir)
	if err != nil {
		return "", "", usageErrorf("%s", err)
	}
	want := ""
	if len(args) > 0 {
		want = args[0]
	}
	id, err := memory.FindSession(afero.NewOsFs(), root, want)
	if err != nil {
		return "", "", usageErrorf("%s", err)
	}
	return root, id, nil
}

func writeJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeMarkdown prints markdown rendered on a terminal, plain otherwise.
func writeMarkdown(md string, f *flags) {
	color := !f.noColor && os.Getenv("NO_COLOR") == ""
	face := &scripts.OneShot{Format: scripts.FormatText, Stdout: os.Stdout, Stderr: os.Stderr,
		StdoutTTY: isTerminal(os.Stdout), Color: color, Width: terminalWidth(os.Stdout)}
	face.WriteAnswer(md)
}
