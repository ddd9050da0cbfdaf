package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// PluginHelp is `ralph plugin --help`.
const PluginHelp = `A Claude Code plugin is a directory with any of hooks/hooks.json, skills/,
commands/ and agents/, and usually a manifest (.claude-plugin/plugin.json:
name, version, description; without one the plugin is named after its
marketplace entry or its directory). ralph plugin add PATH records one in your config
(~/.config/ralph/plugins.json, with the fingerprint of its manifest); ralph
then reads it where it lies, in every project: its hooks run as Claude Code
runs them (with ${CLAUDE_PLUGIN_ROOT}), its skills, commands and agent
definitions join yours. A file of the plugin that is a link out of its
directory is never read.

A plugin is yours only when it lies outside every project (a git work tree
or a directory with .ralph/, wherever you add it from) and outside the
temporary directories, and comes from a source you chose: its path, or a
marketplace that is yours (a directory of yours outside every project, or a
repository ralph cloned for you). Any other plugin holds files the model can
change, so its hooks need your approval as the project's own hooks do, and
its commands' allowed-tools approve nothing in advance. A marketplace that is
not yours may list only plugins inside itself: ralph refuses to clone the
sources it names.

A marketplace (.claude-plugin/marketplace.json) lists plugins: add one with
ralph plugin marketplace add PATH|GIT-URL|OWNER/REPO (a directory is read
where it lies; a repository is cloned with your git, without hooks or
submodules, into ~/.local/share/ralph/plugins), then a plugin it lists with
ralph plugin add NAME@MARKETPLACE, where MARKETPLACE is the name its
marketplace.json gives (or NAME alone, when one marketplace lists it). A
plugin's MCP servers (.mcp.json, mcpServers) start as your own servers do,
or, for a plugin that is not yours, once you approve them (ralph mcp
approve NAME) as a project's. ralph plugin update clones the marketplaces again and
reads their plugins anew. Plugin sources of the git-subdir and npm forms are
not installed; clone such a plugin and add its directory.`

// addPluginCommands wires `ralph plugin`: add, list, remove, update and
// marketplace.
func (c *cli) addPluginCommands(root *cobra.Command) {
	root.AddCommand(pluginCommand(func() bool { return c.f.json }, c.root))
}

// pluginCommand is `ralph plugin` and its subcommands, which also carry
// out chat's /plugin (PluginLine): one tree, so both take the same words
// and say the same lines. json says whether --json was given; root finds
// the project ("" and an error outside one). Each subcommand writes to the
// command's output, which chat points at its screen.
func pluginCommand(json func() bool, root func() (string, error)) *cobra.Command {
	pluginCmd := &cobra.Command{
		Use:   "plugin",
		Short: "Add, list and remove Claude Code plugins (hooks, skills, commands, agents)",
		Long:  PluginHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	run := func(fn func(p PluginCommands, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			p := PluginCommands{Person: rootfs.Person(), ConfigDir: config.UserConfigDir(), JSON: json(), Out: cmd.OutOrStdout(), Now: time.Now,
				Store: plugins.StoreDir(os.Getenv)}
			p.Home, _ = os.UserHomeDir()
			// Outside a project a plugin is added all the same; only
			// whether it lies inside one needs the root.
			if dir, err := root(); err == nil {
				p.Root = dir
			}
			err := fn(p, args)
			if errors.Is(err, ErrPluginUsage) {
				return usageErrorf("%s", strings.TrimPrefix(err.Error(), ErrPluginUsage.Error()+": "))
			}
			return err
		}
	}
	add := &cobra.Command{
		Use: "add PATH|NAME[@MARKETPLACE]",
		// Claude Code's words: claude plugin install, /plugin install.
		Aliases: []string{"install"},
		Short:   "Add the Claude Code plugin in the directory PATH, or one a marketplace lists",
		Long: `Add the Claude Code plugin in the directory PATH, or the plugin NAME that
the marketplace MARKETPLACE lists (ralph plugin marketplace add). NAME alone
takes it from the one added marketplace that lists it, or from the official
one (claude-plugins-official) when that is added and lists it; when several
list it, ralph names them and adds nothing. Adding a plugin again records
its manifest anew. install is another name for add, as Claude Code calls it.`,
		Example: `  ralph plugin add ~/src/claude-code-hooks/plugins/block-dangerous-commands
  ralph plugin marketplace add wshobson/agents
  ralph plugin add python-development@claude-code-workflows`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(p PluginCommands, args []string) error { return p.Add(args[0]) }),
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "The plugins added, what each brings and what is wrong with it (--json)",
		Args:  cobra.NoArgs,
		RunE:  run(func(p PluginCommands, _ []string) error { return p.List() }),
	}
	remove := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"uninstall"},
		Short:   "Forget the plugin NAME (its directory is left as it is); uninstall is another name for it",
		Args:    cobra.ExactArgs(1),
		RunE:    run(func(p PluginCommands, args []string) error { return p.Remove(args[0]) }),
	}
	update := &cobra.Command{
		Use:   "update [NAME]",
		Short: "Clone the marketplaces again and read their plugins (or NAME) anew",
		Args:  cobra.MaximumNArgs(1),
		RunE: run(func(p PluginCommands, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return p.Update(name)
		}),
	}
	// Claude Code turns an installed plugin off and on; ralph keeps no
	// such switch, and says so rather than "unknown command".
	switches := make([]*cobra.Command, 0, 2)
	for _, verb := range []string{"enable", "disable"} {
		switches = append(switches, &cobra.Command{
			Use:    verb + " NAME",
			Hidden: true,
			RunE: func(*cobra.Command, []string) error {
				return usageErrorf("ralph does not %s plugins: a plugin added is on in every project; remove NAME forgets it and add brings it back", verb)
			},
		})
	}
	market := marketplaceCommand(run)
	pluginCmd.AddCommand(add, list, remove, update, market)
	pluginCmd.AddCommand(switches...)
	return pluginCmd
}

// marketplaceCommand is `ralph plugin marketplace` and its subcommands,
// each run by run as pluginCommand's are.
func marketplaceCommand(run func(fn func(p PluginCommands, args []string) error) func(*cobra.Command, []string) error) *cobra.Command {
	market := &cobra.Command{
		Use:   "marketplace",
		Short: "Add, list and remove Claude Code plugin marketplaces",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	market.AddCommand(&cobra.Command{
		Use:   "add PATH|GIT-URL|OWNER/REPO",
		Short: "Add the marketplace in a directory (read in place) or a git repository (cloned)",
		Args:  cobra.ExactArgs(1),
		RunE:  run(func(p PluginCommands, args []string) error { return p.MarketAdd(args[0]) }),
	}, &cobra.Command{
		Use:   "list",
		Short: "The marketplaces added (--json)",
		Args:  cobra.NoArgs,
		RunE:  run(func(p PluginCommands, _ []string) error { return p.MarketList() }),
	}, &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Forget the marketplace NAME and its plugins, deleting what ralph cloned",
		Args:    cobra.ExactArgs(1),
		RunE:    run(func(p PluginCommands, args []string) error { return p.MarketRemove(args[0]) }),
	})
	return market
}

// ErrPluginUsage marks what `ralph plugin` refuses as bad input (exit 2).
var ErrPluginUsage = errors.New("plugin usage")

// PluginCommands carry out `ralph plugin …`.
type PluginCommands struct {
	// Person is the file system of the person's config directory.
	Person    afero.Fs
	ConfigDir string
	// Root is the current project's root ("" outside one); Home the
	// person's home directory, for ~/.claude/settings.json.
	Root, Home string
	JSON       bool
	Out        io.Writer
	Now        func() time.Time
	// Store is ralph's plugin store, where marketplaces are cloned
	// (plugins.StoreDir).
	Store string
}

// adder is the marketplaces' side of p.
func (p PluginCommands) adder() plugins.MarketAdder {
	return plugins.MarketAdder{Person: p.Person, UserConfigDir: p.ConfigDir, Store: p.Store, Project: p.Root, Now: p.Now}
}

// Add records the plugin at path, or the one NAME@MARKETPLACE names.
func (p PluginCommands) Add(path string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("finding the working directory: %w", err)
	}
	if strings.HasPrefix(path, "~"+string(filepath.Separator)) && p.Home != "" {
		path = filepath.Join(p.Home, path[2:])
	}
	var dir string
	name, market, ok := plugins.SplitRef(path)
	if !ok && p.bareName(path, cwd) {
		// A bare name, as Claude Code's install takes it: from the one
		// added marketplace that lists it, or the official one.
		if market, err = p.adder().MarketFor(path); err != nil {
			return p.marketErr(err)
		}
		name, ok = path, true
	}
	if ok && plugins.LooksLikeName(path) {
		var pl plugins.Plugin
		pl, err = p.adder().AddFromMarket(context.Background(), name, market)
		dir = pl.Dir
		if err != nil {
			return p.marketErr(err)
		}
	} else {
		dir, err = plugins.Resolve(path, cwd)
		if err == nil {
			_, err = plugins.Add(p.Person, p.ConfigDir, dir, p.Root, p.Now())
		}
	}
	if err != nil {
		if errors.Is(err, plugins.ErrCorrupt) || errors.Is(err, plugins.ErrNoConfigDir) {
			return err
		}
		return fmt.Errorf("%w: %s", ErrPluginUsage, text.StripControls(plugins.Sentence(path, err)))
	}
	list, err := plugins.List(p.Person, p.ConfigDir, p.Root)
	if err != nil {
		return err
	}
	for _, pl := range list {
		if pl.Dir != dir {
			continue
		}
		s := describePlugin(pl)
		if p.JSON {
			return writeJSON(p.Out, s)
		}
		fmt.Fprintf(p.Out, "Added plugin %s%s from %s: %s.\n", s.Name, versionText(s.Version), s.Dir, s.brings())
		if n := needApproval(s); n != "" {
			fmt.Fprintln(p.Out, n)
		}
		if n := serversNeedApproval(s); n != "" {
			fmt.Fprintln(p.Out, n)
		}
		for _, pr := range s.Problems {
			fmt.Fprintln(p.Out, "  "+pr)
		}
	}
	return nil
}

// bareName reports whether arg is a plugin's name without @MARKETPLACE
// rather than a path: it looks like a name and no directory of that name
// lies in cwd (a directory here keeps meaning itself).
func (p PluginCommands) bareName(arg, cwd string) bool {
	if !plugins.LooksLikeName(arg) || strings.Contains(arg, "@") || !plugins.ValidName(arg) {
		return false
	}
	_, err := os.Stat(filepath.Join(cwd, arg))
	return errors.Is(err, fs.ErrNotExist)
}

// List prints the plugins added.
func (p PluginCommands) List() error {
	list, err := plugins.List(p.Person, p.ConfigDir, p.Root)
	if err != nil {
		return err
	}
	out := make([]pluginSummary, 0, len(list))
	for _, pl := range list {
		out = append(out, describePlugin(pl))
	}
	notes := p.enabledNotes()
	if p.JSON {
		return writeJSON(p.Out, map[string]any{"plugins": out, "notes": nonNil(notes)})
	}
	if len(out) == 0 {
		fmt.Fprintln(p.Out, "No plugins added. Add one with ralph plugin add PATH.")
	}
	for _, s := range out {
		where := ""
		if s.InProject {
			where = ", not yours: " + s.Why
		}
		fmt.Fprintf(p.Out, "%s%s  %s%s\n  brings %s\n", s.Name, versionText(s.Version), s.Dir, where, s.brings())
		if s.Description != "" {
			fmt.Fprintln(p.Out, "  "+text.Clip(s.Description, 160))
		}
		for _, pr := range s.Problems {
			fmt.Fprintln(p.Out, "  problem: "+pr)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(p.Out, "note: "+n)
	}
	return nil
}

// Remove forgets the plugin name.
func (p PluginCommands) Remove(name string) error {
	rec, err := plugins.Remove(p.Person, p.ConfigDir, name)
	if errors.Is(err, plugins.ErrNotFound) {
		return fmt.Errorf("%w: no plugin named %s is added (ralph plugin list shows them)", ErrPluginUsage, text.OneLine(text.StripControls(name)))
	}
	if err != nil {
		return err
	}
	if p.JSON {
		return writeJSON(p.Out, map[string]string{"removed": rec.Name, "dir": rec.Dir})
	}
	fmt.Fprintf(p.Out, "Removed plugin %s; its directory %s is left as it is.\n", rec.Name, rec.Dir)
	return nil
}

// enabledNotes says, once per settings file, that Claude Code's
// enabledPlugins are not installed by ralph.
func (p PluginCommands) enabledNotes() []string {
	var notes []string
	note := func(base, file, shown string) {
		door, err := rootfs.New(base)
		if err != nil {
			return
		}
		if names := plugins.EnabledPlugins(door, filepath.Join(base, file)); len(names) > 0 {
			notes = append(notes, fmt.Sprintf("%s enables plugins from Claude Code's marketplaces (%s), which ralph does not read from there; add each marketplace with ralph plugin marketplace add, then each plugin with ralph plugin add NAME@MARKETPLACE",
				shown, text.OneLine(text.StripControls(strings.Join(names, ", ")))))
		}
	}
	for _, f := range agents.PluginSettings() {
		f = filepath.FromSlash(f)
		if p.Home != "" {
			note(filepath.Join(p.Home, filepath.Dir(f)), filepath.Base(f), "~/"+filepath.ToSlash(f))
		}
		if p.Root != "" {
			note(p.Root, f, filepath.ToSlash(f))
		}
	}
	return notes
}

// pluginSummary is one plugin as `ralph plugin list --json` and `ralph
// doctor` show it: text from the plugin's files, made safe to print.
type pluginSummary struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	Dir         string `json:"dir"`
	// InProject says the plugin is not the person's (plugins.Whose): it
	// lies in a project or a temporary directory, or came from a
	// marketplace that does; Why says which.
	InProject bool   `json:"in_project"`
	Why       string `json:"why,omitempty"`
	Changed   bool   `json:"changed"`
	Hooks     int    `json:"hooks"`
	Skills    int    `json:"skills"`
	Commands  int    `json:"commands"`
	Agents    int    `json:"agents"`
	// MCPServers name the plugin's MCP servers (config.PluginServers
	// starts them).
	MCPServers []string `json:"mcp_servers"`
	Problems   []string `json:"problems"`
}

// describePlugin counts what a plugin brings: its hooks as the hooks
// package reads them (so a hook ralph cannot run is a problem here too),
// and its skills, commands and agents by their files.
func describePlugin(pl plugins.Plugin) pluginSummary {
	safe := func(s string) string { return text.OneLine(text.StripControls(s)) }
	s := pluginSummary{Name: safe(pl.Name), Version: safe(pl.Manifest.Version), Description: safe(pl.Manifest.Description),
		Dir: safe(pl.Dir), InProject: !pl.Trust.Persons, Why: safe(pl.Trust.Why), Changed: pl.Changed, Problems: []string{}}
	files, problems := pl.HookFiles()
	for _, f := range files {
		cfg, err := hooks.Parse(f.Data, hooks.SourcePlugin, f.Path, pl.Dir)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		s.Hooks += len(cfg.Hooks)
		problems = append(problems, cfg.Warnings...)
	}
	c := pl.Count()
	s.Skills, s.Commands, s.Agents = c.Skills, c.Commands, c.Agents
	s.MCPServers = []string{}
	for _, n := range pl.MCPServerNames() {
		s.MCPServers = append(s.MCPServers, safe(n))
	}
	_, mcpProblems := pl.MCPFiles()
	problems = append(problems, mcpProblems...)
	if pl.Changed {
		problems = append(problems, "its manifest changed since it was added; ralph plugin add "+pl.Dir+" records it anew")
	}
	for _, pr := range append(pl.Problems, problems...) {
		s.Problems = append(s.Problems, safe(pr))
	}
	return s
}

// needApproval says how many of a plugin's hooks need the person's
// approval before they run, why, and the command that gives it; "" when
// none does. A plugin that is not the person's (plugins.Whose, the
// decision sessionhooks.FromPlugins takes too) waits for approval in each
// project, and where nobody can be asked its hooks do not run.
func needApproval(s pluginSummary) string {
	if s.Hooks == 0 || !s.InProject {
		return ""
	}
	where := s.Why
	return fmt.Sprintf("%s your approval before %s, since %s. Approve %s with `ralph hooks approve` in each project where %s should run (`ralph hooks` lists %s); "+
		"until then a guard refuses the calls it guards and any other hook does not run.",
		text.Counted(s.Hooks, "hook needs", "hooks need"), text.Plural(s.Hooks, "it runs", "they run"),
		where, text.Plural(s.Hooks, "it", "them"), text.Plural(s.Hooks, "it", "they"), text.Plural(s.Hooks, "it", "them"))
}

// brings says what a plugin brings, counted; its MCP servers, when it
// has any, by name too.
func (s pluginSummary) brings() string {
	parts := []string{text.Counted(s.Hooks, "hook", "hooks"), text.Counted(s.Skills, "skill", "skills"),
		text.Counted(s.Commands, "command", "commands"), text.Counted(s.Agents, "agent", "agents")}
	if len(s.MCPServers) > 0 {
		parts = append(parts, text.Counted(len(s.MCPServers), "MCP server", "MCP servers")+" ("+strings.Join(s.MCPServers, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// serversNeedApproval says that a plugin's MCP servers wait for the
// person's approval in each project, as a project's .mcp.json servers
// do, when the plugin is not the person's; "" when they need none.
func serversNeedApproval(s pluginSummary) string {
	n := len(s.MCPServers)
	if n == 0 || !s.InProject {
		return ""
	}
	return fmt.Sprintf("Its %s your approval before %s, since %s: ralph mcp approve %s, in each project where %s should run.",
		text.Plural(n, "MCP server needs", "MCP servers need"), text.Plural(n, "it starts", "they start"), s.Why,
		strings.Join(s.MCPServers, " "), text.Plural(n, "it", "they"))
}

func versionText(v string) string {
	if v == "" {
		return ""
	}
	return " " + v
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
