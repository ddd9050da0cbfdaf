package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/scripts/acp"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// ACPHelp is the help of ralph acp.
const ACPHelp = `Speak the Agent Client Protocol on standard input and output, for an editor
that runs ralph as its agent. Standard output carries the protocol only;
notices and warnings go to standard error.

  Zed:        settings.json "agent_servers": {"ralph": {"command": "ralph", "args": ["acp"]}}
  JetBrains:  ~/.jetbrains/acp.json "agent_servers": {"ralph": {"command": "ralph", "args": ["acp"]}}
  Neovim:     CodeCompanion's ACP adapter or avante's acp_providers, command "ralph", args {"acp"}

docs/editors.md says what is supported: sessions, permissions, modes, the
editor's files, and what happens when another ralph works in the project.`

func (c *cli) acpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Be an editor's agent: speak the Agent Client Protocol on stdin and stdout (Zed, JetBrains, Neovim)",
		Long:  ACPHelp,
		Example: `  ralph acp
  ralph acp --sandbox read-only --model gpt-5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return exit(c.acp(cmd.Context())) },
	}
}

// acp serves the protocol until the editor goes away.
func (c *cli) acp(ctx context.Context) int {
	proto, err := protocolOut()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return ExitFailed
	}
	defer proto.Close()
	err = acp.Serve(ctx, acp.Options{In: os.Stdin, Out: proto, Log: os.Stderr, Version: c.version, Open: c.openACP})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return ExitFailed
	}
	return ExitOK
}

// openACP opens the project of an ACP session as chat opens it: the
// command line's settings, the client's MCP servers as the person's own,
// and the client's files as the file tools' editor.
func (c *cli) openACP(ctx context.Context, r acp.OpenRequest) (*project.Project, error) {
	f := c.f
	release := sandbox.HoldHidden()
	defer release()
	defer realpath.Hold()()
	ov := f.overrides()
	if len(r.MCP) > 0 {
		inner := ov.Apply
		ov.Apply = func(cfg *config.Config) error {
			if inner != nil {
				if err := inner(cfg); err != nil {
					return err
				}
			}
			var notes []string
			cfg.MCPServers, notes = acp.WithClientServers(cfg.MCPServers, r.MCP)
			for _, n := range notes {
				r.Notify(n)
			}
			return nil
		}
	}
	var editor workers.EditorFiles
	if r.Files != nil {
		editor = r.Files
	}
	open := project.Open
	if c.opener != nil {
		open = c.opener
	}
	return open(ctx, project.Options{
		Dir: r.Dir, Mode: project.ModeChat, Resume: r.Resume, SessionID: r.SessionID, Force: f.force, Yes: f.yes,
		Answers: f.answersWithNoWait(), Notify: r.Notify, Overrides: ov, Conventions: f.conv.conv, Parallel: f.parallel,
		Editor: editor,
	})
}
