package main

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/scripts"
)

// addMCPCommands wires `ralph mcp`: list, add, remove and approve the MCP
// servers whose tools the model may call.
func (c *cli) addMCPCommands(root *cobra.Command) {
	mcpCmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, add, remove and approve MCP servers (tools from outside ralph)",
		Long:  scripts.MCPHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	run := func(fn func(m scripts.MCPCommands, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			dir, err := project.Root(c.f.dir)
			if err != nil {
				return usageErrorf("%s", err)
			}
			m := scripts.MCPCommands{Fs: afero.NewOsFs(), Root: dir, JSON: c.f.json, Out: os.Stdout, Getenv: os.Getenv}
			err = fn(m, cmd, args)
			if errors.Is(err, scripts.ErrMCPUsage) || errors.Is(err, config.ErrInvalid) {
				return usageErrorf("%s", err)
			}
			return err
		}
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "The MCP servers, their state and their tools (--json)",
		Long: `List every MCP server ralph knows for this project — from your config, the
project's .ralph/config.toml and its .mcp.json — with its state and its tools,
as the model sees them (mcp__<server>__<tool>). Your own servers and the
project's approved ones are started to list their tools, then stopped; a
project's server not approved on this machine is not started.`,
		Example: `  ralph mcp list
  ralph mcp list --json | jq '.servers[].tools[].name'`,
		Args: cobra.NoArgs,
		RunE: run(func(m scripts.MCPCommands, cmd *cobra.Command, _ []string) error { return m.List(cmd.Context()) }),
	}
	var add scripts.MCPAdd
	addCmd := &cobra.Command{
		Use:   "add NAME [--url URL] [-- COMMAND ARGS...]",
		Short: "Add an MCP server to your config (--project: to the project's)",
		Long: `Add an MCP server to your config (~/.config/ralph/config.toml), or with
--project to the project's .ralph/config.toml (approved on this machine at
once, since you added it). A stdio server is the command after --; a
streamable HTTP server is --url. A token never goes into the file: name the
environment variable that holds it with --header-env or --bearer-token-env.
Every other byte of the config file, comments included, is kept.`,
		Example: `  ralph mcp add github -- npx -y @modelcontextprotocol/server-github
  ralph mcp add files --env ROOT=/srv -- ./bin/files-mcp --read-only
  ralph mcp add docs --url https://mcp.example.com/mcp --bearer-token-env DOCS_TOKEN
  ralph mcp add api --url http://127.0.0.1:8080/mcp --header-env X-Api-Key=API_KEY`,
		Args: cobra.MinimumNArgs(1),
		RunE: run(func(m scripts.MCPCommands, cmd *cobra.Command, args []string) error {
			add.Name = args[0]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash != 1 {
					return usageErrorf("ralph mcp add takes the server's name before --, then its command")
				}
				if len(args) > 1 {
					add.Command, add.Args = args[1], args[2:]
				}
			} else if len(args) > 1 {
				return usageErrorf("put -- before the server's command: ralph mcp add %s -- %s", args[0], strings.Join(args[1:], " "))
			}
			return m.Add(add)
		}),
	}
	f := addCmd.Flags()
	f.StringVar(&add.URL, "url", "", "a streamable HTTP server's URL")
	f.StringArrayVar(&add.Env, "env", nil, "NAME=VALUE for a stdio server's environment (repeatable)")
	f.StringArrayVar(&add.HeaderEnv, "header-env", nil, "HEADER=VARIABLE: send HEADER with the value of $VARIABLE (repeatable)")
	f.StringVar(&add.BearerEnv, "bearer-token-env", "", "VARIABLE: send Authorization: Bearer $VARIABLE")
	f.BoolVar(&add.Project, "project", false, "add it to the project's .ralph/config.toml instead of your config")
	var projectOnly bool
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server from your config (or the project's .ralph/config.toml)",
		Long: `Remove an MCP server's [mcp_servers.NAME] table from your config, or from the
project's .ralph/config.toml (--project: only there), keeping every other byte.
A server of the project's .mcp.json is not removed: ralph does not edit that
file; switch it off for you with [mcp_servers.NAME] enabled = false instead.`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(m scripts.MCPCommands, _ *cobra.Command, args []string) error {
			return m.Remove(args[0], projectOnly)
		}),
	}
	remove.Flags().BoolVar(&projectOnly, "project", false, "remove it from the project's .ralph/config.toml")
	approve := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve the project's MCP servers on this machine, so they may start",
		Long: `A server the project defines (its .mcp.json or .ralph/config.toml, which a
cloned repository controls) runs a program as you, so ralph starts it only
once you approved it on this machine. This approves the servers named, as
they are defined now, and prints everything it approves (command, arguments,
env names and values with secrets hidden, cwd, URL, header names, roots) and
what changed since you last approved it: if the repository changes any of
it, it must be approved again. The record is
~/.config/ralph/approved_commands.json.`,
		Example: `  ralph mcp list          # shows which servers need approval
  ralph mcp approve github`,
		Args: cobra.MinimumNArgs(1),
		RunE: run(func(m scripts.MCPCommands, _ *cobra.Command, args []string) error { return m.Approve(args) }),
	}
	mcpCmd.AddCommand(list, addCmd, remove, approve)
	root.AddCommand(mcpCmd)
}
