package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/sandbox"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// flags holds every command-line option.
type flags struct {
	// planArg is ralph run's PLAN as given.
	planArg        string
	model          string
	baseURL        string
	provider       string
	thinkingTokens int
	outputFormat   string
	json           bool
	yes            bool
	maxTurns       int
	maxRetries     int
	dir            string
	// allowHome is --allow-home-project (projectroot.Grantable).
	allowHome      bool
	noColor        bool
	commandTimeout int
	idleTimeout    time.Duration
	maxOutput      int
	// fallbackModels are --fallback-model's, in order (config fallback_models).
	fallbackModels []string
	cont           bool
	session        string
	force          bool
	parallel       int
	run            memory.RunConfig
	maxWait        time.Duration
	maxWaitSet     bool // --max-wait was given (0 is a value: never wait)
	// engine is ralph run's --engine and how to reach it (flags over the
	// config's [engine]).
	engine config.Engine
	// tracker is ralph run's --tracker and --epic.
	tracker   trackerChoice
	sandbox   string
	noNetwork bool
	webSearch bool
	style     string
	noWait    bool
	// waitForAnswers is --wait-for-answers ("" not given,
	// waitForAnswersOn without a value); answerTimeout --answer-timeout.
	waitForAnswers string
	answerTimeout  time.Duration
	answers        project.Answers
	// conv are the flags people bring from Claude Code and codex.
	conv conventionFlags
	// outputSchemaFile and jsonSchema are --output-schema FILE and
	// --json-schema JSON, the one-shot's output schema (schemaflag.go).
	outputSchemaFile string
	jsonSchema       string
	// claude are the flags of Claude Code's stream-json and its Agent
	// SDK (claudeflags.go).
	shape shapeFlags
}

// exitError carries an exit code out of cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func exit(code int) error {
	if code != 0 {
		return exitError{code}
	}
	return nil
}

// ChatShell is the interactive shell (package repl), which main hands
// to the command line: the shell builds on this package's kit, so this
// package never imports it.
type ChatShell struct {
	// Help is `ralph chat --help`'s long text.
	Help string
	// Main runs the shell on an opened project until the person leaves.
	Main func(ctx context.Context, p *project.Project, o ChatOptions) int
}

// ChatOptions is what the command line tells the chat shell.
type ChatOptions struct {
	Term    terminal.Facts
	Version string
	// Notices are printed before the first prompt (crash recovered, ...).
	Notices []string
	// Handoff, when set, is a task loop stopped by Ctrl-C, whose
	// conversation the shell takes over.
	Handoff *Handoff
	// Reopen, when set, is told the session chat's /resume picked; once
	// the shell has left, the chat opens that session as --resume does.
	Reopen func(id string)
	// RunArgs reads /run's flags, ralph run's loop flags, into the
	// session's task loop configuration (runArgs).
	RunArgs func(args string) error
	// Plugin carries out chat's /plugin ARGS (PluginLine).
	Plugin func(args string, out io.Writer) error
}

// cli is one invocation: its flags and the facts of its terminal.
type cli struct {
	f       flags
	found   *projectroot.Found // the project, once root found it
	term    terminal.Facts
	version string
	shell   ChatShell
	// out is the commands' standard output (stdout.go).
	out *outWriter
	// opener opens the project (nil: project.Open). The settings walk
	// (TestEachFlagTravelsAsItsRowSays) sets it to see what each face
	// opens the project with.
	opener func(context.Context, project.Options) (*project.Project, error)
}

// Main is ralph's command line: it parses args, runs the command and
// returns the exit code. version is ralph's; shell is the chat shell.
func Main(args []string, version string, shell ChatShell) int {
	// The records' codecs are built beside the command line, on the
	// other processor: most commands open a project, and a one-shot's
	// bring-up met them on its own goroutine (memory.WarmCodecs).
	memory.WarmCodecs(event.Event{})
	c := &cli{version: version, shell: shell, out: &outWriter{}}
	root := c.command()
	root.SetOut(c.out)
	if completing(args) {
		c.addValueCompletions(root)
	}
	args = promptWord(root, args)
	root.SetArgs(args)
	err := singleDashLong(root, args)
	if err == nil {
		err = root.ExecuteContext(context.Background())
	}
	failBeforeRun(root, args, err)
	code := c.exitCode(err)
	if werr := c.out.failed(); code == ExitOK && werr != nil {
		fmt.Fprintf(os.Stderr, "ralph: cannot write the output: %v\n", werr)
		return ExitFailed
	}
	return code
}

// command is ralph's command line: the root command (a one-shot, or the
// chat shell), every command under it and their flags.
func (c *cli) command() *cobra.Command {
	version := c.version
	f := &c.f
	root := &cobra.Command{
		Use:   "ralph [flags] [task]",
		Short: "An AI coding agent you can talk to and leave working",
		Long: `ralph is an AI coding agent for any OpenAI-compatible model.

  ralph                 open the chat shell (on a terminal; same as ralph chat)
  ralph "task"          run one task and exit (for shells, scripts and CI)
  ralph exec "task"     the same, as codex exec: never the chat shell
  cmd | ralph "task"    piped input is given to the model as context
  ralph run             work through RALPH_TASKS.md on its own
  ralph resume          continue an interrupted session
  ralph watch           follow the running ralph from another terminal;
                        ralph stop, say, pause, continue and answer steer it
  ralph mcp list        MCP servers whose tools the model may call (add, remove, approve)
  ralph doctor          check the setup (config, model, sandbox, git) and say how to fix it

` + modelHelp() + `

Questions (approvals, ask_user) are asked at the terminal; without one, ralph run
waits for ralph answer up to --answer-timeout, a one-shot or script refuses at once
(--wait-for-answers waits), and in CI nothing waits.

Exit codes: 0 success, 1 the task failed, 2 usage or configuration error,
3 another ralph holds this project, 130 interrupted (SIGINT), 143 (SIGTERM), 129 (SIGHUP).`,
		Example: `  ralph "add a --verbose flag to main.go"
  ralph --json -y "run the tests and fix what fails" | jq .result
  git diff | ralph "write a commit message for this change"
  ` + localExample() + ` ralph "explain this repo"`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,

		PersistentPreRunE: c.prepare,
		RunE:              c.runRoot,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&f.model, config.ModelSetting.Flag, "m", "", "model name (env "+config.ModelSetting.Env+")")
	pf.StringVar(&f.baseURL, config.BaseURLSetting.Flag, "", "the model endpoint, e.g. "+localEndpoint()+"; with --provider anthropic a Messages API host (env "+config.BaseURLSetting.Env+")")
	pf.StringVar(&f.provider, config.ProviderSetting.Flag, "", "the model provider: "+config.ProviderNames()+" (env "+config.ProviderSetting.Env+"; default: inferred from the keys set)")
	pf.IntVar(&f.thinkingTokens, "thinking-tokens", 0, "switch extended thinking on with this budget of tokens, at least 1024 (Anthropic; env MAX_THINKING_TOKENS)")
	pf.StringVarP(&f.dir, "dir", "C", "", "project directory (default: the project the working directory is in, named on stderr when it lies above; never / or a sticky or other user's directory)")
	pf.BoolVar(&f.allowHome, projectroot.AllowHomeFlag, false, "let the project or an --add-dir be your home directory, / or a directory holding your keys or ralph's own configuration "+
		"(refused otherwise; the model may then write your shell's start-up files, though your keys and ralph's own files stay hidden)")
	pf.BoolVarP(&f.yes, "yes", "y", false, "approve every run_command and MCP tool call without asking (except a command asking to leave the sandbox, and what ask_before in the config names)")
	pf.IntVar(&f.maxTurns, "max-turns", 0, fmt.Sprintf("stop after this many model turns (default %d)", config.DefaultMaxTurns))
	pf.IntVar(&f.maxRetries, "max-retries", 0, fmt.Sprintf("retries of a failed model call: 429, 5xx, broken streams (default %d)", config.DefaultMaxRetries))
	pf.IntVar(&f.commandTimeout, "command-timeout", 0, "default run_command timeout in seconds (default 120)")
	pf.DurationVar(&f.idleTimeout, "idle-timeout", 0, "give up on a model endpoint silent this long, e.g. 90s (default 60s)")
	pf.IntVar(&f.maxOutput, "max-output-tokens", 0, "limit each answer to this many tokens (config max_output_tokens; default: the server's)")
	pf.StringArrayVar(&f.fallbackModels, "fallback-model", nil, "a model the turn goes to when the model is overloaded or unavailable; repeatable, at most 3, provider:model for another provider's (config fallback_models)")
	pf.BoolVar(&f.noColor, "no-color", false, "plain output without colour (also NO_COLOR)")
	pf.StringVar(&f.style, "style", "", "how answers look on a terminal: auto (from its background), dark, light or notty")
	pf.StringVar(&f.outputFormat, "output-format", FormatText, "text, json (one result object) or stream-json (one event per line)")
	pf.BoolVar(&f.json, "json", false, "shorthand for --output-format json")
	root.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the latest session with this follow-up")
	root.Flags().StringVar(&f.session, "session", "", "continue the session with this id (or a unique part of it)")
	root.Flags().StringVar(&f.outputSchemaFile, outputSchemaFlag, "", "a JSON Schema `FILE` the final answer must conform to: printed as that JSON, and structured_output in --json's result (as codex exec)")
	root.Flags().StringVar(&f.jsonSchema, jsonSchemaFlag, "", "the output schema as inline `JSON` instead of a file (as claude -p)")
	pf.IntVar(&f.parallel, "parallel", 0, "child agents at once (default 4); with run: tasks at once (default 1)")
	pf.BoolVar(&f.force, "force", false, "take over the project: stop a hung ralph on this host, or displace one on another host")
	pf.StringVarP(&f.sandbox, "sandbox", "s", "", "what the model's commands may change: read-only, workspace-write (default) or danger-full-access")
	pf.BoolVar(&f.noNetwork, "no-network", false, "no network for the model's commands")
	pf.BoolVar(&f.webSearch, "web-search", false, "offer the model its provider's own web search, billed per search (Anthropic's, OpenAI's search models; config web_search)")
	pf.BoolVar(&f.noWait, "no-wait", false, "never wait for ralph answer: without a terminal, refuse at once what needs a person")
	pf.StringVar(&f.waitForAnswers, "wait-for-answers", "", "without a terminal, a one-shot or script waits for ralph answer (=DURATION: at most that long; default --answer-timeout)")
	pf.Lookup("wait-for-answers").NoOptDefVal = waitForAnswersOn
	pf.DurationVar(&f.answerTimeout, "answer-timeout", config.DefaultAnswerTimeout, "longest a question waits for ralph answer with nobody at a terminal, then it is refused (config answer_timeout; 0: no limit)")
	root.Flags().SetInterspersed(true)

	c.addCommands(root)
	// exec copies the root's own flags, so it comes after every one of them.
	c.addExecCommand(root)
	trimSubcommandHelp(root)
	wrapHelp(root)
	hintTaskWords(root)
	root.Version = version
	// The line `ralph --version` alone prints before the packages are
	// initialised (scripts/startup), for --version beside other words.
	root.SetVersionTemplate("ralph {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	useOwnBashCompletion(root)
	return root
}

// prepare runs before every command: it settles what the flags leave
// open (the retries, the style, the terminal, how questions are
// answered, the conventions) and refuses a style that is none.
func (c *cli) prepare(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("max-retries") {
		c.f.maxRetries = -1
	}
	if c.f.style != "" && !config.ValidStyle(c.f.style) {
		return usageHintf("--style %q is not one of auto, dark, light or notty", c.f.style)
	}
	c.term = terminal.Detect(c.f.noColor, os.Getenv)
	c.term.Style = c.f.style
	if err := c.f.settleAnswers(cmd); err != nil {
		return err
	}
	return c.settleConventions(cmd)
}

// runRoot is ralph with no command: a one-shot of the words given, or,
// without any, the chat shell (c.task decides). A word that looks like a
// mistyped command is answered, not sent to the model.
func (c *cli) runRoot(cmd *cobra.Command, args []string) error {
	args, err := c.resumeArgs(args)
	if err != nil {
		return err
	}
	// After "--" every word is the task's, even a command's name,
	// and so is a word after a flag that asks for a prompt (-c).
	prompting := c.f.cont || c.f.session != "" || c.f.conv.print
	// A bare word another CLI takes as a command of its own
	// (update, login) is answered, whatever flags come with it:
	// it never becomes a model request. "--" makes it a task.
	if len(args) == 1 && cmd.ArgsLenAtDash() != 0 {
		if err := habitAnswer(args[0]); err != nil {
			return err
		}
	}
	if len(args) == 1 && cmd.ArgsLenAtDash() != 0 && !prompting && !strings.ContainsAny(args[0], " \t\n") {
		if s := nearCommand(cmd, args[0]); s != "" {
			return usageHintf("unknown command %q; did you mean %q? (to send a one-word task: ralph -- %s)", args[0], s, args[0])
		}
	}
	return exit(c.task(cmd.Context(), strings.Join(args, " ")))
}

// addCommands adds every command under the root, and the flags of the
// conventions and SDKs other agents' users know, but exec (which copies
// the root's flags, so it is added after them all).
func (c *cli) addCommands(root *cobra.Command) {
	version := c.version
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print ralph's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "ralph %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	})
	c.addConversationCommands(root)
	c.addLoopCommands(root)
	c.addPlanCommand(root)
	c.addReviewCommand(root)
	c.addRecordCommands(root)
	c.addGitCommands(root)
	c.addControlCommands(root)
	c.addMCPCommands(root)
	c.addPluginCommands(root)
	c.addHooksCommands(root)
	root.AddCommand(c.handoffCommand(), c.acpCommand())
	root.AddCommand(c.doctorCommand(), c.configCommand(), c.modelsCommand(), c.skillsCommand())
	c.addServeCommands(root)
	c.addConventionFlags(root)
	c.addSDKFlags(root)
}

// exitCode is the exit code of the command's error, said on stderr.
func (c *cli) exitCode(err error) int {
	var ee exitError
	var tooLarge *rootfs.TooLargeError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &tooLarge):
		// The file, its size and the limit are the whole story; what
		// was being done when ralph met it would only bury that.
		fmt.Fprintf(os.Stderr, "ralph: %s\n", tooLarge)
		return ExitUsage
	default:
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		var ue usageError
		switch {
		case errors.As(err, &ue):
			if ue.hint {
				fmt.Fprintln(os.Stderr, "Run 'ralph --help' for usage.")
			}
			return ExitUsage
		case cobraUsage().MatchString(err.Error()):
			fmt.Fprintln(os.Stderr, "Run 'ralph --help' for usage.")
			return ExitUsage
		case errors.Is(err, memory.ErrNotWritable):
			return ExitUsage // a project ralph may not write to is bad input
		}
		return ExitFailed
	}
}

// format is the output format the flags ask for.
func (c *cli) format() string {
	if c.f.json {
		return FormatJSON
	}
	return c.f.outputFormat
}

// open opens the project for a face.
func (c *cli) open(ctx context.Context, mode string, resume bool, notify func(string),
	runCfg func(*memory.RunConfig) (*memory.RunConfig, error)) (*project.Project, error) {
	f := c.f
	if notify == nil {
		notify = func(s string) { fmt.Fprintln(os.Stderr, "ralph: "+s) }
	}
	// Finding the project, checking it may be one and opening it read
	// the person's secret paths four times; nothing can change them in
	// between, so one reading serves all, let go of before the model is
	// asked anything (sandbox.HoldHidden). So do the directories above
	// every path the bring-up resolves (realpath.Hold).
	release := sandbox.HoldHidden()
	defer release()
	defer realpath.Hold()()
	root, err := c.root()
	if err != nil {
		return nil, err
	}
	open := project.Open
	if c.opener != nil {
		open = c.opener
	}
	return open(ctx, project.Options{
		Dir: root, Mode: mode, Resume: resume, SessionID: f.session, Force: f.force, Yes: f.yes, Answers: f.answersWithNoWait(), Notify: notify, Run: runCfg,
		Overrides:   f.overrides(),
		Conventions: f.conv.conv,
		Parallel:    f.parallel,
	})
}

// waitForAnswersOn is --wait-for-answers given without a duration.
const waitForAnswersOn = "on"

// settleAnswers turns the flags of waiting for answers into the
// project's Answers (--no-wait is read when the project opens, since
// --permission-mode dontAsk sets it too).
func (f *flags) settleAnswers(cmd *cobra.Command) error {
	if f.answerTimeout < 0 {
		return usageErrorf("--answer-timeout cannot be negative (got %s); 0 means no limit", f.answerTimeout)
	}
	if cmd.Flags().Changed("answer-timeout") {
		d := f.answerTimeout
		f.answers.Timeout = &d
	}
	switch f.waitForAnswers {
	case "":
	case waitForAnswersOn:
		f.answers.WaitFor = new(time.Duration)
	default:
		d, err := time.ParseDuration(f.waitForAnswers)
		if err != nil || d <= 0 {
			return usageErrorf("--wait-for-answers=%s is not a duration such as 10m or 2h", f.waitForAnswers)
		}
		f.answers.WaitFor = &d
	}
	if f.noWait && f.answers.WaitFor != nil {
		return usageErrorf("--no-wait and --wait-for-answers say opposite things; give one")
	}
	return nil
}

// answersWithNoWait are the Answers with --no-wait as settled last.
func (f flags) answersWithNoWait() project.Answers {
	a := f.answers
	a.NoWait = f.noWait
	return a
}

// maxWaitOverride is --max-wait when given, nil to take the config's.
func (f flags) maxWaitOverride() *time.Duration {
	if !f.maxWaitSet {
		return nil
	}
	d := f.maxWait
	return &d
}

// task is `ralph "task"`: one task and exit, or the chat shell for bare
// ralph on a terminal.
func (c *cli) task(ctx context.Context, task string) int {
	face, code := c.oneShotFace(c.format())
	if code != 0 {
		return code
	}
	face.Verbose = c.f.conv.verbose
	sc, err := c.f.outputSchema()
	if err != nil {
		return face.Fail(ExitUsage, err)
	}
	face.Schema = sc
	if code := c.settleShape(face); code != 0 {
		return code
	}
	stdin, piped, err := c.taskInput(ctx, face, &task)
	if err != nil {
		return face.Fail(ExitUsage, err)
	}
	prompt := BuildPrompt(task, stdin)
	resume := c.f.cont || c.f.session != ""
	if prompt == "" {
		// Bare ralph, ralph -c and ralph --resume on a terminal open the
		// chat shell, on the session they name; -p never does.
		if !piped && c.term.InTTY && !c.f.conv.print {
			if sc != nil {
				// The chat shell has no final answer to shape.
				return face.Fail(ExitUsage, fmt.Errorf("--%s and --%s shape a one-shot's final answer: give the task (ralph --%s FILE \"task\")",
					outputSchemaFlag, jsonSchemaFlag, outputSchemaFlag))
			}
			return c.chat(ctx)
		}
		return face.Fail(ExitUsage, fmt.Errorf("no task given: pass it as an argument (ralph \"task\") or on standard input"))
	}
	shortRunGC()
	// The signal handler OneShotMain installs is registered meanwhile,
	// while opening the project waits for its disk.
	interrupts.Listen()
	p, err := c.open(ctx, project.ModeOneShot, resume, nil, nil)
	if err != nil {
		return face.Fail(project.ExitCode(err), err)
	}
	defer p.Close()
	return OneShotMain(ctx, p, face, prompt, false)
}

// chat is the interactive shell on a terminal, scripted mode otherwise.
func (c *cli) chat(ctx context.Context) int {
	if !c.term.InTTY || !c.term.ErrTTY {
		return c.script(ctx, os.Stdin, ScriptOptions{Format: c.format(), KeepGoing: true})
	}
	resume := c.f.cont || c.f.session != ""
	for {
		var notices []string
		p, err := c.open(ctx, project.ModeChat, resume, func(s string) { notices = append(notices, s) }, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
			return project.ExitCode(err)
		}
		next := ""
		code := c.shell.Main(ctx, p, ChatOptions{Term: c.term, Version: c.version, Notices: notices, Reopen: func(id string) { next = id },
			RunArgs: func(args string) error { return runArgs(p, args) }, Plugin: PluginLine(p.Root)})
		if err := p.Close(); err != nil && next != "" {
			fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		}
		if next == "" {
			return code
		}
		// /resume picked a session: it opens as `ralph --resume ID`
		// opens one (and shows what it holds as that does).
		c.f.session, c.f.cont, c.f.conv.conv.ForkSession, resume = next, false, false, true
	}
}

// script runs chat lines without a person.
func (c *cli) script(ctx context.Context, in io.Reader, o ScriptOptions) int {
	face, code := c.oneShotFace(o.Format)
	if code != 0 {
		return code
	}
	interrupts.Listen()
	p, err := c.open(ctx, project.ModeScript, c.f.cont || c.f.session != "", nil, nil)
	if err != nil {
		return face.Fail(project.ExitCode(err), err)
	}
	defer p.Close()
	return ScriptMain(ctx, p, in, o, c.term)
}

func (c *cli) addConversationCommands(root *cobra.Command) {
	f := &c.f
	chat := &cobra.Command{
		Use:   "chat",
		Short: "Talk to ralph in an interactive shell (or run lines piped on standard input)",
		Long:  c.shell.Help,
		Example: `  ralph chat
  ralph chat -c                       # continue the latest session
  ralph chat < steps.txt              # run each line as if typed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return exit(c.chat(cmd.Context())) },
	}
	var keepGoing bool
	script := &cobra.Command{
		Use:   "script FILE",
		Short: "Run a file of chat lines, stopping at the first failed step",
		Long:  ScriptHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := io.Reader(os.Stdin)
			if args[0] != "-" {
				file, err := os.Open(args[0])
				if err != nil {
					fmt.Fprintf(os.Stderr, "ralph: cannot read the script: %v\n", err)
					return exit(ExitUsage)
				}
				defer file.Close()
				in = file
			}
			return exit(c.script(cmd.Context(), in, ScriptOptions{Format: c.format(), KeepGoing: keepGoing, Progress: c.term.ErrTTY}))
		},
	}
	script.Flags().BoolVar(&keepGoing, "keep-going", false, "run every step even after one failed (the exit code still says it failed)")
	for _, cmd := range []*cobra.Command{chat, script} {
		cmd.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the latest session")
		cmd.Flags().StringVar(&f.session, "session", "", "continue the session with this id (or a unique part of it)")
		cmd.Flags().BoolVar(&f.conv.forkSession, "fork-session", false, "with -c or --session: continue in a copy of the session, leaving the original as it was")
	}
	root.AddCommand(chat, script)
}

// records is the read-only side of the project named by -C or found from
// the working directory.
func (c *cli) records() (Records, error) {
	root, door, err := c.door()
	if err != nil {
		return Records{}, err
	}
	return Records{Fs: door, Person: rootfs.Person(), Root: root, JSON: c.f.json, Term: c.term, Out: c.stdout(), Err: os.Stderr}, nil
}

// session resolves an optional session id argument.
func (c *cli) session(args []string) (Records, string, error) {
	r, err := c.records()
	if err != nil {
		return r, "", err
	}
	want := ""
	if len(args) > 0 {
		want = args[0]
	}
	id, err := memory.FindSession(r.Fs, r.Root, want)
	if err != nil {
		return r, "", usageErrorf("%s", err)
	}
	return r, id, nil
}

// addRecordCommands wires the commands that read and manage a project's
// records: none of them calls a model.
func (c *cli) addRecordCommands(root *cobra.Command) {
	withRecords := func(fn func(r Records) error) func(*cobra.Command, []string) error {
		return func(*cobra.Command, []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			return fn(r)
		}
	}
	withSession := func(fn func(cmd *cobra.Command, r Records, id string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			r, id, err := c.session(args)
			if err != nil {
				return err
			}
			return fn(cmd, r, id)
		}
	}
	var follow, raw bool
	logs := &cobra.Command{
		Use:   "logs [session-id]",
		Short: "Show a session's events (the latest by default); -f follows a running one",
		Args:  cobra.MaximumNArgs(1),
		RunE: withSession(func(cmd *cobra.Command, r Records, id string) error {
			return r.Logs(cmd.Context(), id, follow, raw)
		}),
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events while the session runs")
	logs.Flags().BoolVar(&raw, "raw", false, "print the events as JSON lines")
	root.AddCommand(
		&cobra.Command{
			Use:   "init",
			Short: "Create AGENT.md (ralph's learnings), RALPH_GOALS.md, RALPH_TASKS.md, RALPH_PROGRESS.md, RALPH_TODO.md, and AGENTS.md where no instructions file is (chat's /init does too, then has the model fill AGENTS.md in)",
			Args:  cobra.NoArgs,
			RunE:  withRecords(Records.Init),
		},
		c.statusCommand(),
		c.sessionsCommand(),
		logs,
		c.reportCommand(),
		&cobra.Command{
			Use:   "analyze [session-id]",
			Short: "Duration, turns, tokens, cost, tool use, errors and success rate of a session",
			Args:  cobra.MaximumNArgs(1),
			RunE:  withSession(func(_ *cobra.Command, r Records, id string) error { return r.Analyze(id) }),
		},
		c.insightsCommand(),
		c.compareCommand(),
		&cobra.Command{
			Use:   "import prd.json",
			Short: "Import ralph-tui's prd.json user stories into RALPH_TASKS.md",
			Long: `Import the userStories of a ralph-tui prd.json into RALPH_TASKS.md: one task per
story, done when it passes, with its priority and dependsOn as ralph's priority
and depends. Importing again updates the same tasks instead of adding them twice;
every other line of the task file is kept as it is.`,
			Args: cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				r, err := c.records()
				if err != nil {
					return err
				}
				data, err := os.ReadFile(args[0])
				if err != nil {
					return usageErrorf("cannot read %s: %s", args[0], err)
				}
				if _, err := r.Import(data); err != nil {
					return usageErrorf("%s: %s", args[0], err)
				}
				return nil
			},
		},
	)
}

// statusCommand is `ralph status`: the project's session, tasks and
// lock, or with --graph the order ralph run would take the tasks in.
func (c *cli) statusCommand() *cobra.Command {
	var graph bool
	statusCmd := &cobra.Command{
		Use:   "status [PLAN]",
		Short: "Show the project's session, tasks and lock (no model call); --graph the order of the tasks",
		Long: `Show the project's session, its tasks and the lock, without calling the model.
With PLAN (a plan file, see ralph plans), the same for that plan: its tasks
and the newest session that worked it.
With --graph, print instead the order in which ralph run would take the open
tasks if each were done at its first attempt: the lowest priority number first,
and among equals the task at the head of the longest chain of tasks waiting for
it, then the one most tasks wait for, then file order. A dependency that names no
task, or a cycle, is listed after it: ralph run refuses such a list (exit 2).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			plan := ""
			if len(args) == 1 {
				if plan, err = c.planName(r, args[0]); err != nil {
					return usageErrorf("%s", err)
				}
			}
			if graph {
				return planUsage(r.StatusGraph(plan))
			}
			if m, ok := r.TemporalMarker(); ok && plan == "" {
				return r.StatusTemporal(context.Background(), m)
			}
			return planUsage(r.Status(plan))
		},
	}
	statusCmd.Flags().BoolVar(&graph, "graph", false, "print the order ralph run would take the open tasks in, and what keeps any from starting")
	return statusCmd
}
