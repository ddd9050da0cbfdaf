// Command ralph is an AI coding agent you can talk to and leave working.
// This file only wires: flags and environment in, exit code out.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/ralph-dev/ralph/scripts/suggest"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/scripts"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// flags holds every command-line option of the root command.
type flags struct {
	model          string
	baseURL        string
	outputFormat   string
	json           bool
	yes            bool
	maxTurns       int
	maxRetries     int
	dir            string
	noColor        bool
	commandTimeout int
	cont           bool
	session        string
	force          bool
	resume         bool
	parallel       int
}

// exitError carries an exit code out of cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(profiled(func() int { return run(os.Args[1:]) }))
}

// profiled writes a CPU profile to $RALPH_CPUPROFILE when set: a tool for
// ralph's developers to see where its own time goes.
func profiled(fn func() int) int {
	path := os.Getenv("RALPH_CPUPROFILE")
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ralph: cannot write the CPU profile:", err)
		return fn()
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: cannot start the CPU profile:", err)
		return fn()
	}
	defer pprof.StopCPUProfile()
	return fn()
}

func run(args []string) int {
	var f flags
	root := &cobra.Command{
		Use:   "ralph [flags] [task]",
		Short: "An AI coding agent you can talk to and leave working",
		Long: `ralph is an AI coding agent for any OpenAI-compatible model.

  ralph                 open the chat shell (on a terminal; same as ralph chat)
  ralph "task"          run one task and exit (for shells, scripts and CI)
  cmd | ralph "task"    piped input is given to the model as context
  ralph run             work through RALPH_TASKS.md on its own
  ralph resume          continue an interrupted session

The model is configured by OPENAI_API_KEY, OPENAI_BASE_URL and RALPH_MODEL,
the flags below, or .ralph/config.toml (project) over ~/.config/ralph/config.toml.
Local endpoints (Ollama, vLLM, LM Studio, llama.cpp) need no key.

Exit codes: 0 success, 1 the task failed, 2 usage or configuration error,
3 another ralph holds this project, 130 interrupted (SIGINT), 143 (SIGTERM).`,
		Example: `  ralph "add a --verbose flag to main.go"
  ralph --json -y "run the tests and fix what fails" | jq .result
  git diff | ralph "write a commit message for this change"
  OPENAI_BASE_URL=http://localhost:11434/v1 RALPH_MODEL=qwen2.5-coder ralph "explain this repo"`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && !strings.ContainsAny(args[0], " \t\n") {
				if s := nearCommand(cmd, args[0]); s != "" {
					return usageHintf("unknown command %q; did you mean %q? (to send a one-word task, add a space: %q)", args[0], s, args[0]+" ")
				}
			}
			if !cmd.Flags().Changed("max-retries") {
				f.maxRetries = -1
			}
			code := oneShot(cmd.Context(), f, strings.Join(args, " "), cmd)
			if code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&f.model, "model", "m", "", "model name (env RALPH_MODEL)")
	pf.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL)")
	pf.StringVarP(&f.dir, "dir", "C", "", "project directory to work in (default: the current directory)")
	pf.BoolVarP(&f.yes, "yes", "y", false, "approve every run_command without asking")
	pf.IntVar(&f.maxTurns, "max-turns", 0, fmt.Sprintf("stop after this many model turns (default %d)", config.DefaultMaxTurns))
	pf.IntVar(&f.maxRetries, "max-retries", 0, fmt.Sprintf("retries of a failed model call: 429, 5xx, broken streams (default %d)", config.DefaultMaxRetries))
	pf.IntVar(&f.commandTimeout, "command-timeout", 0, "default run_command timeout in seconds (default 120)")
	pf.BoolVar(&f.noColor, "no-color", false, "plain output without colour (also NO_COLOR)")
	pf.StringVar(&f.outputFormat, "output-format", scripts.FormatText, "text, json (one result object) or stream-json (one event per line)")
	pf.BoolVar(&f.json, "json", false, "shorthand for --output-format json")
	root.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the latest session with this follow-up")
	root.Flags().StringVar(&f.session, "session", "", "continue the session with this id (or a unique part of it)")
	pf.IntVar(&f.parallel, "parallel", 0, "child agents at once (default 4); with run: tasks at once (default 1)")
	pf.BoolVar(&f.force, "force", false, "take over the project lock from a hung ralph or another host")
	root.Flags().SetInterspersed(true)

	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print ralph's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "ralph %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	})
	addSessionCommands(root, &f)
	addChatCommands(root, &f)
	addRunCommand(root, &f)
	root.Version = version
	root.SetVersionTemplate("ralph {{.Version}}\n")
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageHintf("%s", err.Error()) })

	err := root.ExecuteContext(context.Background())
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		var ue usageError
		switch {
		case errors.As(err, &ue):
			if ue.hint {
				fmt.Fprintln(os.Stderr, "Run 'ralph --help' for usage.")
			}
			return scripts.ExitUsage
		case cobraUsage.MatchString(err.Error()):
			fmt.Fprintln(os.Stderr, "Run 'ralph --help' for usage.")
			return scripts.ExitUsage
		}
		return scripts.ExitFailed
	}
}

// nearCommand returns the subcommand a single-word task is one typo away
// from (one insertion, deletion, substitution or swap of neighbours), so
// `ralph verison` is caught, while real one-word tasks such as "loop" still
// go to the model.
func nearCommand(cmd *cobra.Command, word string) string {
	for _, c := range cmd.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if suggest.Distance(strings.ToLower(word), name) <= 1 {
				return name
			}
		}
	}
	return ""
}

// usageError is bad input from the command line: exit 2. hint adds the
// pointer to --help, for mistakes in the command itself.
type usageError struct {
	msg  string
	hint bool
}

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return usageError{msg: fmt.Sprintf(format, a...)} }

func usageHintf(format string, a ...any) error {
	return usageError{msg: fmt.Sprintf(format, a...), hint: true}
}

// cobraUsage matches the errors cobra itself returns for a malformed
// command line.
var cobraUsage = regexp.MustCompile(`^(unknown (command|flag|shorthand)|accepts |requires |invalid argument|flag needs|bad flag)`)

// projectDir resolves -C to an absolute directory.
func projectDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project directory %s is not a directory", dir)
	}
	return abs, nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func terminalWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}
