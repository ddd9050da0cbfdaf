package cli

import (
	"os"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/doctor"

	"github.com/spf13/cobra"
)

// doctorCommand is `ralph doctor`: the setup, checked.
func (c *cli) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup: config, model endpoint, sandbox, git, agents, MCP, plugins (--json)",
		Long: `Check what a run here would use, one line per check (ok, warning or
problem, with the fix): the config files read and the keys each sets; the
model, endpoint and where the API key comes from (never the key); whether the
endpoint answers, lists the model and accepts tools (one tiny request, a few
tokens on a paid endpoint); the sandbox and what this kernel gives it; git; the
agent CLIs ralph run --agent can use; the MCP servers and their approval; the
plugins added with ralph plugin add (where each lies, what it brings: hooks,
skills, commands, agents, and what of it is left out); how many skills, custom
commands and agent definitions a session here finds.

No session starts and the project is not locked. Exit 0 when a run could
start, 1 when a problem would stop it.`,
		Example: `  ralph doctor
  ralph doctor --json | jq '.checks[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := c.loadEffective(cmd)
			r := doctor.Run(cmd.Context(), doctor.Setup{Version: c.version, Root: e.Root, Cfg: e.Cfg, Files: e.Files, KeySource: e.KeySource, Err: err,
				Plugins: pluginChecks(e.Root)})
			if err := doctor.Write(c.stdout(), r, c.f.json); err != nil {
				return err
			}
			if !r.OK {
				return exit(ExitFailed)
			}
			return nil
		},
	}
}

// pluginChecks report each plugin added with ralph plugin add: where it
// lies, what it brings and what of it is left out; and, once, the
// plugins Claude Code's settings enable from a marketplace, which ralph
// does not install.
func pluginChecks(root string) []doctor.Check {
	p := PluginCommands{Person: rootfs.Person(), ConfigDir: config.UserConfigDir(), Root: root}
	p.Home, _ = os.UserHomeDir()
	list, err := plugins.List(p.Person, p.ConfigDir, root)
	if err != nil {
		return []doctor.Check{{Name: "plugins", Status: doctor.StatusWarning, Detail: err.Error(),
			Fix: "remove " + plugins.RecordFile(p.ConfigDir) + " and add the plugins again with ralph plugin add PATH"}}
	}
	var out []doctor.Check
	for _, pl := range list {
		s := describePlugin(pl)
		ch := doctor.Check{Name: "plugin " + s.Name, Status: doctor.StatusOK, Detail: s.Dir + ": " + s.brings()}
		if s.InProject {
			ch.Detail += ", not yours (its hooks need your approval): " + s.Why
		}
		if len(s.Problems) > 0 {
			ch.Status = doctor.StatusWarning
			ch.Detail += "; " + strings.Join(s.Problems, "; ")
			ch.Fix = "mend the plugin's files, or forget it with ralph plugin remove " + s.Name
		}
		out = append(out, ch)
	}
	for _, n := range p.enabledNotes() {
		out = append(out, doctor.Check{Name: "marketplace plugins", Status: doctor.StatusWarning, Detail: n, Fix: "ralph plugin add the directory of each one you want"})
	}
	return out
}
