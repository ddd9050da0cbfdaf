package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/config"
	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts"
	"github.com/ralph-dev/ralph/workers"
)

// oneShot wires `ralph "task"`: configuration, session record, model
// client, tools and the one-shot face around one coordinator run.
func oneShot(ctx context.Context, f flags, task string, cmd *cobra.Command) int {
	format := f.outputFormat
	if f.json {
		format = scripts.FormatJSON
	}
	color := !f.noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	face := &scripts.OneShot{
		Format: format, Stdout: os.Stdout, Stderr: os.Stderr,
		StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr),
		Color: color, Width: terminalWidth(os.Stdout),
	}
	fail := face.Fail
	if err := scripts.ValidateFormat(format); err != nil {
		face.Format = scripts.FormatText
		return fail(scripts.ExitUsage, err)
	}

	root, err := projectDir(f.dir)
	if err != nil {
		return fail(scripts.ExitUsage, err)
	}
	stdin, piped, err := scripts.ReadPipedStdin(os.Stdin)
	if err != nil {
		return fail(scripts.ExitUsage, err)
	}
	prompt := scripts.BuildPrompt(task, stdin)
	if prompt == "" {
		if !piped && isTerminal(os.Stdin) {
			_ = cmd.Help()
			return 0
		}
		return fail(scripts.ExitUsage, fmt.Errorf("no task given: pass it as an argument (ralph \"task\") or on standard input"))
	}

	fs := afero.NewOsFs()
	cfg, err := config.Load(config.Sources{Fs: fs, ProjectRoot: root, UserConfigDir: config.UserConfigDir()})
	if err != nil {
		return fail(scripts.ExitUsage, err)
	}
	applyFlags(&cfg, f)
	if err := cfg.Validate(); err != nil {
		return fail(scripts.ExitUsage, err)
	}

	id := memory.NewID(time.Now())
	sess, err := memory.CreateSession(fs, root, id, memory.State{
		Status: memory.StatusRunning, Mode: "oneshot", Model: cfg.Model, StartedAt: time.Now().UTC(),
	}, cfg.APIKey)
	if err != nil {
		return fail(scripts.ExitFailed, fmt.Errorf("cannot record the session under %s: %w", root, err))
	}

	tools, err := workers.NewToolset(workers.Options{
		Root:           root,
		Approver:       approver(f.yes),
		CommandTimeout: cfg.CommandTimeout,
		Env:            commandEnv(cfg.APIKeyEnv),
	})
	if err != nil {
		return fail(scripts.ExitUsage, err)
	}
	client := llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, MaxAttempts: cfg.MaxRetries + 1})

	queue := interrupts.NewQueue()
	stopSignals := interrupts.NotifySignals(ctx, queue)
	defer stopSignals()

	face.Format, face.Model, face.Cwd = format, cfg.Model, root
	face.Start()
	defer face.Close()
	coord := coordinator.New(coordinator.Options{
		Model: client, ModelName: cfg.Model, Tools: tools, Store: sess, Queue: queue,
		SessionID: id, MaxTurns: cfg.MaxTurns, System: systemPrompt(root), Emit: face.Handle,
	})
	res := coord.Run(ctx, prompt)
	return face.Finish(res)
}

func applyFlags(cfg *config.Config, f flags) {
	if f.model != "" {
		cfg.Model = f.model
	}
	if f.baseURL != "" {
		cfg.SetBaseURL(f.baseURL)
	}
	if f.maxTurns != 0 {
		cfg.MaxTurns = f.maxTurns
	}
	if f.maxRetries >= 0 {
		cfg.MaxRetries = f.maxRetries
	}
	if f.commandTimeout != 0 {
		cfg.CommandTimeout = time.Duration(f.commandTimeout) * time.Second
	}
}

// approver picks how run_command is approved: --yes approves all; with a
// terminal the user is asked on it; otherwise commands are refused with a
// result telling the model (and the user) how to allow them.
func approver(yes bool) workers.Approver {
	if yes {
		return workers.AllowAll
	}
	if isTerminal(os.Stderr) {
		if tty, err := os.Open("/dev/tty"); err == nil {
			return &workers.PromptApprover{In: tty, Out: os.Stderr}
		}
	}
	return workers.DenyNoTerminal
}

// commandEnv is the environment for run_command: ralph's own model key is
// removed, because nothing a command does needs it and its output could
// otherwise carry it into the conversation.
func commandEnv(keyVar string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == keyVar || name == "OPENAI_API_KEY" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func systemPrompt(root string) string {
	return fmt.Sprintf(`You are ralph, an AI coding agent working in the project at %s.
You act through tools: read_file, write_file, edit_file, list_files, search and run_command.
Paths are relative to the project root; you cannot touch files outside it.
Work step by step: inspect before you change, make focused edits, and verify with commands when that helps.
When the task is done, answer with a short summary of what you did. Today is %s.`, root, time.Now().Format("2006-01-02"))
}
