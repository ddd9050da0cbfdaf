package sessionhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Where a session's hooks come from, and which may run (docs/hooks.md):
//
//   - the person's own: [[hooks.EVENT]] in their ralph config, and
//     ~/.claude/settings.json unless claude_hooks = false; they run;
//   - the project's: [[hooks.EVENT]] in .ralph/config.toml,
//     .claude/settings.json and .claude/settings.local.json, read through
//     the project's door (a link out of the project is not read); files
//     the model can write, so each hook runs only once the person
//     approved it, with the files it names, on this machine;
//   - plugins' hooks/hooks.json: a plugin inside the project is the
//     model's to write and needs approval as the project's hooks do; one
//     the person added from outside the project is theirs.
//
// "disableAllHooks": true in the person's files turns every hook off, in
// the project's the project's and its plugins' (Loaded.Disabled).

// maxSettings bounds a settings file ralph reads, and maxHookFile a file
// a hook names, whose content an approval covers.
const (
	maxSettings = 4 << 20
	maxHookFile = 64 << 20
)

// Plugin is a plugin directory whose hooks/hooks.json ralph reads
// (memory/plugins decides which plugins a project has).
type Plugin struct {
	Dir string
	// ByPerson: the person added it from a directory outside the project,
	// so its hooks are theirs. A plugin inside the project is the model's
	// to write, whoever added it.
	ByPerson bool
}

// Sources are what Load reads.
type Sources struct {
	Root string
	// Fs is the project's door; Person the person's own directories.
	Fs, Person afero.Fs
	// Home holds ~/.claude; "" reads none.
	Home          string
	UserConfigDir string
	Config        config.Config
	Plugins       []Plugin
	// Definitions are the agent definitions whose front matter's hooks
	// run while an agent follows them (agenthooks.go); nil reads them
	// from Root and Home.
	Definitions *agentdefs.Set
}

// State says whether a hook runs.
type State string

// The states of a hook.
const (
	Runs    State = "runs"
	Waiting State = "waiting for approval"
	Off     State = "disabled"
)

// Entry is one hook found, with whether it may run.
type Entry struct {
	Hook hooks.Hook
	// Review is what the person approves of it; set when it needs
	// approval (a project's or a plugin's hook).
	Review *approval.ProjectHook
	State  State
	// Agent names the agent definition whose front matter holds the
	// hook: it runs only while an agent follows that definition.
	Agent string
}

// Loaded are every hook of a project's sources.
type Loaded struct {
	Entries []Entry
	// Disabled names the person's file that said "disableAllHooks":
	// true, which turns every hook off; ProjectDisabled a project's file
	// (or a plugin's inside the project) that said it, which turns off
	// the hooks the project's files and plugins define, not the person's
	// own: a file the model can write may not turn off the person's
	// guards.
	Disabled, ProjectDisabled string
	// Warnings say what was left out and why, Ignored the project
	// settings' keys ralph does not take from a project (each once).
	Warnings, Ignored []string
	// PersonSettingsHooks counts the hooks of the person's agent
	// settings files (agents.HookSettingsFiles), PersonSettingsFiles names
	// the files that had any.
	PersonSettingsHooks int
	PersonSettingsFiles []string
	// PersonEnv is the `env` of the person's own settings files
	// (~/.claude/settings.json), in the order of the files and then of
	// the names: it reaches the model's commands through the one
	// credential rule (childenv.Session), never ralph's own provider,
	// git, hooks or MCP servers. A file that lies in the project
	// (--allow-home-project) is not the person's and gives none.
	PersonEnv []childenv.Assignment
	// Rules are the settings files' permission rules ralph honours, as
	// the one approval policy takes them (permissions.go): the person's
	// allow, ask and deny, the project's ask and deny. Permissions list
	// every rule found, with what became of it.
	Rules       approval.ToolRules
	Permissions []Permission
	// PermissionWarnings are the ask and deny rules left out, which the
	// session's start names on one line (RulesLine).
	PermissionWarnings []Permission
	// ReadRules are the Read(…) deny rules, which the session's door
	// holds (memory/kept), not the approval policy.
	ReadRules kept.Rules
	// ProjectEnvs are the `env` of the project's settings files, each
	// given to the sandboxed commands only once the person approved it
	// (projectenv.go).
	ProjectEnvs []ProjectEnv
}

// projectSettings is what ralph reads of a project's Claude settings
// besides the hooks, to honour or to say it ignores.
type projectSettings struct {
	permissionsOf
	Env           map[string]any `json:"env"`
	APIKeyHelper  any            `json:"apiKeyHelper"`
	StatusLine    any            `json:"statusLine"`
	DefaultMode   any            `json:"defaultMode"`
	AddDirs       any            `json:"additionalDirectories"`
	OtelHeaders   any            `json:"otelHeadersHelper"`
	AWSAuth       any            `json:"awsAuthRefresh"`
	AWSCredExport any            `json:"awsCredentialExport"`
}

// Load reads every source of hooks and decides which run as they
// are and which wait for the person's approval. Nothing is asked here.
func Load(src Sources) Loaded {
	var l Loaded
	var cfgs []hooks.Config
	parse := func(data []byte, s hooks.Source, file, pluginRoot string) {
		if len(data) == 0 {
			return
		}
		c, err := hooks.Parse(data, s, file, pluginRoot)
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%v; its hooks are left out", err))
			return
		}
		l.disabledBy(c, s == hooks.SourceUser, file)
		cfgs = append(cfgs, c)
	}
	parse(src.Config.UserHooks.JSON(), hooks.SourceUser, src.Config.UserHooks.File, "")
	settings := agents.HookSettingsFiles()
	if src.Home != "" {
		for _, f := range settings {
			data := l.readPerson(src, f.Shared)
			l.takePermissions(data, "~/"+filepath.ToSlash(f.Shared), true)
			l.PersonEnv = append(l.PersonEnv, settingsEnv(data)...)
			if src.Config.NoAgentSettingsHooks {
				continue
			}
			before := len(cfgs)
			parse(data, hooks.SourceUser, "~/"+filepath.ToSlash(f.Shared), "")
			if len(cfgs) > before {
				l.PersonSettingsHooks += len(cfgs[before].Hooks)
				l.PersonSettingsFiles = append(l.PersonSettingsFiles, "~/"+filepath.ToSlash(f.Shared))
			}
		}
	}
	parse(src.Config.ProjectHooks.JSON(), hooks.SourceProject, config.ProjectFile, "")
	for _, f := range settings {
		parse(l.readProject(src, f.Shared), hooks.SourceProject, filepath.ToSlash(f.Shared), "")
		if f.Local != "" {
			parse(l.readProject(src, f.Local), hooks.SourceProjectLocal, filepath.ToSlash(f.Local), "")
		}
	}
	for _, p := range src.Plugins {
		// The plugin's hooks files (hooks/hooks.json, and what its
		// manifest names or holds) are read through the plugin's own
		// door (memory/plugins): a file linking out of it is not read.
		pl, err := plugins.Open(p.Dir)
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("plugin %s: %v; its hooks are left out", p.Dir, err))
			continue
		}
		files, problems := pl.HookFiles()
		for _, pr := range problems {
			l.Warnings = append(l.Warnings, fmt.Sprintf("plugin %s: %s", pl.Name, pr))
		}
		mine := p.ByPerson && !inside(src.Root, p.Dir)
		for _, f := range files {
			c, err := hooks.Parse(f.Data, hooks.SourcePlugin, f.Path, p.Dir)
			if err != nil {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%v; its hooks are left out", err))
				continue
			}
			if mine {
				// The person's own plugin: its hooks are theirs.
				for i := range c.Hooks {
					c.Hooks[i].Source = hooks.SourceUser
				}
			}
			l.disabledBy(c, mine, f.Path)
			cfgs = append(cfgs, c)
		}
	}
	all := hooks.Merge(cfgs...)
	l.Warnings = append(l.Warnings, all.Warnings...)
	entry := func(h hooks.Hook, agent string) Entry {
		e := Entry{Hook: h, State: Runs, Agent: agent}
		if needsApproval(h) {
			r := review(src, h)
			e.Review = &r
			if !approval.HookApproved(src.Person, src.UserConfigDir, src.Root, r) {
				e.State = Waiting
			}
		}
		if l.Disabled != "" || l.ProjectDisabled != "" && h.Source != hooks.SourceUser {
			e.State = Off
		}
		return e
	}
	for _, h := range all.Hooks {
		l.Entries = append(l.Entries, entry(h, ""))
	}
	for _, d := range definitionsOf(src).Defs() {
		if d.Hooks.Disabled {
			continue
		}
		for _, h := range d.Hooks.Hooks {
			l.Entries = append(l.Entries, entry(h, d.Name))
		}
	}
	return l
}

// disabledBy notes that c's file said "disableAllHooks": true, and
// whether it is the person's.
func (l *Loaded) disabledBy(c hooks.Config, persons bool, file string) {
	switch {
	case !c.Disabled:
	case persons && l.Disabled == "":
		l.Disabled = file
	case !persons && l.ProjectDisabled == "":
		l.ProjectDisabled = file
	}
}

// DisabledNote says which hooks "disableAllHooks" turned off, and why;
// "" when none did.
func (l Loaded) DisabledNote() string {
	switch {
	case l.Disabled != "":
		return fmt.Sprintf("no hook runs: %s says \"disableAllHooks\": true", l.Disabled)
	case l.ProjectDisabled != "":
		return fmt.Sprintf("the project's hooks do not run: %s says \"disableAllHooks\": true; yours still run, since a file the model can write may not turn off your hooks", l.ProjectDisabled)
	}
	return ""
}

// needsApproval reports whether h is one the project's files or a
// plugin the person did not add define.
func needsApproval(h hooks.Hook) bool { return h.Source != hooks.SourceUser }

// readPerson reads ~/.claude/settings.json through the person's own file
// system: a link out of ~/.claude (into a dotfiles repository) is theirs
// and is followed, but one into the project is the model's file, and its
// hooks are left out.
func (l *Loaded) readPerson(src Sources, file string) []byte {
	path := filepath.Join(src.Home, file)
	if real, err := filepath.EvalSymlinks(path); err == nil && src.Root != "" {
		root, rerr := filepath.EvalSymlinks(src.Root)
		// plain: no link below the home directory leads to the file.
		home, herr := filepath.EvalSymlinks(src.Home)
		plain := herr == nil && filepath.Join(home, file) == real
		switch {
		case rerr == nil && inside(root, real) && plain:
			// Not a link: the project is the home directory (or holds
			// it, --allow-home-project), so the file is the project's and
			// is read as such (readProject, when the project is home).
			l.Warnings = append(l.Warnings, fmt.Sprintf("~/%s lies in the project (%s), which the model can write; ralph reads it as the project's settings, not as yours (its hooks wait for your approval, its allow rules count for nothing)", filepath.ToSlash(file), src.Root))
			return nil
		case rerr == nil && inside(root, real):
			l.Warnings = append(l.Warnings, fmt.Sprintf("~/%s is a link into the project (%s), which the model can write; ralph does not read it as yours", filepath.ToSlash(file), real))
			return nil
		case real != path && sandbox.WritableByCommands(real):
			// The temporary directory is the model's as much as the
			// project is: every command may write there (as for plugins).
			l.Warnings = append(l.Warnings, fmt.Sprintf("~/%s is a link into %s, which the model's commands can write; ralph does not read it as yours", filepath.ToSlash(file), filepath.Dir(real)))
			return nil
		}
	}
	data, err := rootfs.ReadSmall(src.Person, path, maxSettings)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		l.Warnings = append(l.Warnings, fmt.Sprintf("~/%s: %v; its hooks and permissions are left out", filepath.ToSlash(file), err))
		return nil
	}
	return data
}

// readProject reads one of the project's Claude settings files through
// its door, and takes from it, besides the hooks, only permissions.ask
// and permissions.deny (takePermissions);
// the keys that would grant something are named in Ignored.
func (l *Loaded) readProject(src Sources, name string) []byte {
	rel := filepath.ToSlash(name)
	data, err := rootfs.ReadSmall(src.Fs, filepath.Join(src.Root, name), maxSettings)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case errors.Is(err, rootfs.ErrLinkOut) || errors.Is(err, rootfs.ErrOutsideRoot):
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s is a link out of the project; ralph reads no project settings from outside the project, so its hooks and rules are left out", rel))
		return nil
	case err != nil:
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %v; its hooks are left out", rel, err))
		return nil
	}
	var s projectSettings
	if json.Unmarshal(data, &s) != nil {
		// hooks.Parse says what is wrong with it.
		return data
	}
	l.takePermissions(data, rel, false)
	l.takeProjectEnv(src, data, rel)
	var ignored []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"permissions.allow", len(s.Permissions.Allow) > 0},
		{"apiKeyHelper", s.APIKeyHelper != nil}, {"statusLine", s.StatusLine != nil},
		{"defaultMode", s.DefaultMode != nil}, {"additionalDirectories", s.AddDirs != nil}, {"otelHeadersHelper", s.OtelHeaders != nil},
		{"awsAuthRefresh", s.AWSAuth != nil}, {"awsCredentialExport", s.AWSCredExport != nil}} {
		if k.set {
			ignored = append(ignored, k.name)
		}
	}
	if len(ignored) > 0 {
		l.Ignored = append(l.Ignored, fmt.Sprintf("ralph ignores %s in %s: a project's file may not grant permissions or run helpers; only its hooks and env (once you approve them), permissions.ask and permissions.deny count",
			strings.Join(ignored, ", "), rel))
	}
	return data
}

// pluginDoor is the file system a plugin's files are read through: the
// project's door for a plugin inside the project, a door of its own for
// one outside it (a link out of the plugin is not followed).
func pluginDoor(src Sources, dir string) (afero.Fs, error) {
	if inside(src.Root, dir) {
		return src.Fs, nil
	}
	return rootfs.New(dir)
}

// inside reports whether path is root or lies under it.
func inside(root, path string) bool {
	if root == "" {
		return false
	}
	r, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	return err == nil && (r == "." || filepath.IsLocal(r))
}

// fileDoor is the door a file p that h's command names is read through:
// the project's inside the project, the plugin's outside it.
func fileDoor(src Sources, h hooks.Hook, p string) (afero.Fs, error) {
	if inside(src.Root, p) {
		return src.Fs, nil
	}
	return pluginDoor(src, h.PluginRoot)
}

// review is what the person approves of h: the hook, and the content of
// every file its command names under the project or its plugin.
func review(src Sources, h hooks.Hook) approval.ProjectHook {
	r := approval.ProjectHook{Event: string(h.Event), Matcher: h.Matcher, Command: h.Command, Source: h.File, PluginRoot: h.PluginRoot}
	for _, p := range coveredFiles(src, h) {
		door, err := fileDoor(src, h, p)
		if err != nil {
			continue
		}
		fi, err := door.Stat(p)
		if errors.Is(err, os.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
			// Not a file: a program's name, an option.
			continue
		}
		shown := p
		if rel, err := filepath.Rel(src.Root, p); err == nil && filepath.IsLocal(rel) {
			shown = filepath.ToSlash(rel)
		}
		f := approval.HookFile{Path: shown}
		if data, err := rootfs.ReadSmall(door, p, maxHookFile); err == nil {
			sum := sha256.Sum256(data)
			f.SHA256 = hex.EncodeToString(sum[:])
		}
		r.Files = append(r.Files, f)
	}
	slices.SortFunc(r.Files, func(a, b approval.HookFile) int { return strings.Compare(a.Path, b.Path) })
	return r
}

// maxDirFiles bounds the files of one directory a hook's command names
// that its approval covers.
const maxDirFiles = 256

// coveredFiles are the files whose content the approval of h covers: each
// file its command names (hooks.NamedFiles), the files a glob it names
// matches, and every file under a directory it names other than the
// project's or the plugin's root, so that `cd "$CLAUDE_PROJECT_DIR/.claude/hooks"
// && sh guard.sh` covers guard.sh. What the command reaches otherwise (a
// file a script sources, a Makefile, package.json's scripts) is not seen:
// that is why a project's hooks always run in the sandbox (docs/hooks.md).
func coveredFiles(src Sources, h hooks.Hook) []string {
	var out []string
	seen := map[string]bool{}
	keep := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range hooks.NamedFiles(h.Command, src.Root, h.PluginRoot) {
		door, err := fileDoor(src, h, p)
		if err != nil {
			continue
		}
		matches := []string{p}
		if strings.ContainsAny(p, "*?[") {
			if m, err := afero.Glob(door, p); err == nil && len(m) > 0 {
				matches = m
			}
		}
		for _, m := range matches {
			fi, err := door.Stat(m)
			if err != nil || !fi.IsDir() || filepath.Clean(m) == filepath.Clean(src.Root) || filepath.Clean(m) == filepath.Clean(h.PluginRoot) {
				keep(m)
				continue
			}
			n := 0
			_ = afero.Walk(door, m, func(path string, info os.FileInfo, err error) error {
				if err != nil || n >= maxDirFiles {
					return filepath.SkipDir
				}
				if info.Mode().IsRegular() {
					n++
					keep(path)
				}
				return nil
			})
		}
	}
	return out
}

// settingsEnv is the `env` object of a settings file, sorted by name so
// that the session's environment is the same from run to run: strings as
// they are, numbers and booleans as JSON writes them (Claude Code takes
// "BASH_DEFAULT_TIMEOUT_MS": 300000 too), anything else left out.
func settingsEnv(data []byte) []childenv.Assignment {
	var s struct {
		Env map[string]json.RawMessage `json:"env"`
	}
	if len(data) == 0 || json.Unmarshal(data, &s) != nil {
		return nil
	}
	var out []childenv.Assignment
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		raw := s.Env[name]
		var str string
		if json.Unmarshal(raw, &str) == nil {
			out = append(out, childenv.Assignment{Name: name, Value: str})
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			switch v.(type) {
			case float64, bool:
				out = append(out, childenv.Assignment{Name: name, Value: strings.TrimSpace(string(raw))})
			}
		}
	}
	return out
}

// FromPlugins are the plugins whose hooks the session reads: whose each
// is was decided once, by plugins.Whose (its Trust: outside every
// project and temporary directory, from a source the person chose); one
// that is not the person's holds what the model could have written or
// chosen, so its hooks wait for approval.
func FromPlugins(list []plugins.Plugin) []Plugin {
	var out []Plugin
	for _, p := range list {
		if p.Fs() != nil {
			out = append(out, Plugin{Dir: p.Dir, ByPerson: p.Trust.Persons})
		}
	}
	return out
}
