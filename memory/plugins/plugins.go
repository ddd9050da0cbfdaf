// Package plugins keeps the Claude Code plugins the person added to ralph
// with `ralph plugin add PATH` or `NAME@MARKETPLACE`: directories holding
// any of hooks/hooks.json, skills/, commands/, agents/ and .mcp.json, and usually a
// manifest (.claude-plugin/plugin.json: name, version, description). The record of what was
// added lives in the person's config directory (plugins.json, written
// atomically); the plugins themselves stay where they are and are read
// where they lie, each through a door of memory/rootfs held on the
// plugin's own directory, so a plugin's file that links out of it (a
// plugin.json or a SKILL.md linked to ~/.ssh/id_rsa) is never read.
//
// This package reads and describes plugins; it runs nothing. The hooks,
// skills, commands and agent definitions a plugin brings are handed to
// their own loaders (HookFiles, SkillRoots, CommandDirs, AgentDirs), which
// decide what may run by the plugin's Trust (trust.go: Whose): a plugin
// that is not the person's holds files the model could have written or
// chosen, so its hooks need the person's approval as a project's do and
// its commands' allowed-tools pre-approve nothing.
//
// Claude Code's marketplaces are read by market.go: a plugin is added by
// the path of its directory or as NAME@MARKETPLACE. The enabledPlugins
// key of Claude Code's settings is only named (claude.go).
package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// ManifestPath is where a plugin's manifest lies, relative to its
// directory. The agents' table (workers/agents) sets it, since the
// layout is one CLI's and memory stands below that table; while it is
// empty no directory is a plugin.
var ManifestPath string

// The default places of what a plugin brings, relative to its directory,
// as Claude Code reads them.
var (
	hooksPath   = filepath.Join("hooks", "hooks.json")
	skillsDir   = "skills"
	commandsDir = "commands"
	agentsDir   = "agents"
)

// ManifestLimit is how much of a plugin.json or hooks.json ralph reads.
const ManifestLimit = 256 << 10

// Sentinel errors, for callers that say what went wrong in their own words.
var (
	// ErrNotPlugin says a directory holds no .claude-plugin/plugin.json.
	ErrNotPlugin = errors.New("no Claude Code plugin")
	// ErrManifest says a plugin.json is not the JSON Claude Code reads, or
	// names no usable plugin.
	ErrManifest = errors.New("malformed plugin manifest")
	// ErrLinkOut says a plugin's file is a link out of the plugin's
	// directory, which ralph does not follow.
	ErrLinkOut = errors.New("a link out of the plugin's directory")
)

// Manifest is a plugin's .claude-plugin/plugin.json, as far as ralph reads
// it.
type Manifest struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Commands, Agents and Skills are extra places beside the default
	// directories (a path or a list of paths, relative to the plugin).
	Commands Paths `json:"commands,omitempty"`
	Agents   Paths `json:"agents,omitempty"`
	Skills   Paths `json:"skills,omitempty"`
	// Hooks is a path (or list of paths) to more hooks files, or the hooks
	// object itself, inline.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// MCPServers is a path (or list of paths) to more files of MCP
	// servers beside .mcp.json, or the servers themselves, inline
	// (mcp.go).
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
}

// Paths is a manifest field that is one path or a list of them.
type Paths []string

// UnmarshalJSON takes a string or a list of strings.
func (p *Paths) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*p = Paths{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("a path or a list of paths: %w", err)
	}
	*p = many
	return nil
}

// validName is Claude Code's rule for a plugin's name (kebab-case), a
// little wider: letters, digits, dots, dashes and underscores.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidName reports whether s is a name ralph takes for a plugin or a
// marketplace.
func ValidName(s string) bool { return validName().MatchString(s) }

// ParseManifest reads a plugin.json. file names it in errors.
func ParseManifest(data []byte, file string) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %w", ErrManifest, file, err)
	}
	if m.Name == "" {
		return Manifest{}, fmt.Errorf("%w: %s names no plugin (its \"name\" is empty)", ErrManifest, file)
	}
	if !validName().MatchString(m.Name) {
		return Manifest{}, fmt.Errorf("%w: %s: the name %q is not one ralph takes (letters, digits, '.', '-', '_', at most 64)", ErrManifest, file, m.Name)
	}
	return m, nil
}

// Fingerprint is the fingerprint of a manifest's bytes, as recorded.
func Fingerprint(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Plugin is one added plugin, as it lies on disk now.
type Plugin struct {
	Name string
	// Dir is the plugin's directory, absolute, with its links resolved.
	Dir      string
	Manifest Manifest
	// Trust is whose the plugin is (Whose): unless it is the person's,
	// its files are ones the model could have written or chosen, so its
	// hooks need approval as a project's do and its commands'
	// allowed-tools pre-approve nothing.
	Trust Trust
	// Fingerprint is the manifest's as recorded when the plugin was added;
	// Changed says the manifest on disk differs from it now.
	Fingerprint string
	Changed     bool
	// Problems are sentences about what of the plugin ralph leaves out.
	Problems []string

	fsys afero.Fs
}

// Fs is the door the plugin's files are read through: it refuses a link
// out of the plugin's directory. Nil when the directory could not be
// opened (Problems says why).
func (p Plugin) Fs() afero.Fs { return p.fsys }

// Open reads the plugin at dir (absolute) as it lies now, without the
// record: for a caller handed a plugin's directory (the hooks' loader).
func Open(dir string) (Plugin, error) {
	p, _, err := open(dir, "")
	return p, err
}

// doors are the plugins' doors, one per directory for the life of the
// process: a door holds its directory open, and the custom commands'
// lookup lists the plugins at every Tab.
var doors sync.Map // string -> *rootfs.Fs

func door(dir string) (*rootfs.Fs, error) {
	if d, ok := doors.Load(dir); ok {
		return d.(*rootfs.Fs), nil
	}
	d, err := rootfs.New(dir)
	if err != nil {
		return nil, err
	}
	actual, _ := doors.LoadOrStore(dir, d)
	return actual.(*rootfs.Fs), nil
}

// open reads the plugin at dir (absolute and resolved) through a door on
// it. The manifest's bytes come back for the fingerprint. The manifest is
// optional, as in Claude Code: without one, a directory holding any of a
// plugin's default parts is a plugin named name (its marketplace entry's
// name), or after its directory when name is empty.
func open(dir, name string) (Plugin, []byte, error) {
	p := Plugin{Dir: dir}
	d, err := door(dir)
	if err != nil {
		return p, nil, fmt.Errorf("%s: %w", dir, err)
	}
	p.fsys = d
	fi, err := d.Stat(dir)
	if err != nil {
		return p, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !fi.IsDir() {
		return p, nil, fmt.Errorf("%w: %s is not a directory", ErrNotPlugin, dir)
	}
	if ManifestPath == "" {
		return p, nil, fmt.Errorf("%w: no agent's plugin layout is known", ErrNotPlugin)
	}
	file := filepath.Join(dir, filepath.FromSlash(ManifestPath))
	data, err := rootfs.ReadSmall(d, file, ManifestLimit)
	switch {
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return p, nil, fmt.Errorf("%w: %s", ErrLinkOut, file)
	case errors.Is(err, fs.ErrNotExist):
		return p.withoutManifest(name)
	case err != nil:
		return p, nil, fmt.Errorf("%s: %w", file, err)
	}
	m, err := ParseManifest(data, file)
	if err != nil {
		return p, nil, err
	}
	p.Name, p.Manifest = m.Name, m
	p.checkPaths()
	return p, data, nil
}

// withoutManifest is the plugin in p.Dir that has no manifest: Claude
// Code finds its parts in their default places and names it by its
// marketplace entry or its directory. A directory with none of those
// parts is no plugin: a mistyped path must not be recorded as one.
func (p Plugin) withoutManifest(name string) (Plugin, []byte, error) {
	parts := false
	for _, part := range []string{commandsDir, agentsDir, skillsDir, hooksPath, mcpPath} {
		if _, err := p.fsys.Stat(filepath.Join(p.Dir, part)); err == nil {
			parts = true
		}
	}
	if !parts {
		return p, nil, fmt.Errorf("%w: %s holds no %s and none of commands/, agents/, skills/, hooks/hooks.json, .mcp.json", ErrNotPlugin, p.Dir, ManifestPath)
	}
	if name == "" {
		name = filepath.Base(p.Dir)
	}
	if !validName().MatchString(name) {
		return p, nil, fmt.Errorf("%w: %s has no manifest, and its name %q is not one ralph takes (letters, digits, '.', '-', '_', at most 64)", ErrManifest, p.Dir, name)
	}
	p.Name, p.Manifest = name, Manifest{Name: name}
	return p, nil, nil
}

// inside resolves rel against the plugin's directory and keeps it only
// when it stays inside: a manifest may not name a place out of its
// plugin. The sentence says why a path was left out.
func (p Plugin) inside(field, rel string) (string, string) {
	if filepath.IsAbs(rel) {
		return "", fmt.Sprintf("its %s path %q is absolute; ralph reads a plugin's files only inside its directory", field, rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", fmt.Sprintf("its %s path %q leads out of its directory, which ralph does not follow", field, rel)
	}
	return filepath.Join(p.Dir, clean), ""
}

// checkPaths says once, in Problems, which of the manifest's paths lead
// out of the plugin; the helpers below leave them out without a word.
func (p *Plugin) checkPaths() {
	for field, paths := range map[string]Paths{"commands": p.Manifest.Commands, "agents": p.Manifest.Agents, "skills": p.Manifest.Skills} {
		for _, rel := range paths {
			if _, why := p.inside(field, rel); why != "" {
				p.Problems = append(p.Problems, why)
			}
		}
	}
	slices.Sort(p.Problems)
}

// places is the default directory (when it exists) and the manifest's
// extra ones, without repeats.
func (p Plugin) places(field, def string, extra Paths) []string {
	var out []string
	if p.fsys == nil {
		return nil
	}
	if fi, err := p.fsys.Stat(filepath.Join(p.Dir, def)); err == nil && fi.IsDir() {
		out = append(out, filepath.Join(p.Dir, def))
	}
	for _, e := range extra {
		if d, why := p.inside(field, e); why == "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Shown is how a place of the plugin is named to the person: "plugin
// NAME/" and its path inside the plugin.
func (p Plugin) Shown(place string) string {
	rel, err := filepath.Rel(p.Dir, place)
	if err != nil {
		rel = place
	}
	return "plugin " + p.Name + "/" + filepath.ToSlash(rel)
}

// SkillRoots are the plugin's skills directories (each holding one
// directory per skill with a SKILL.md), to be read through Fs.
func (p Plugin) SkillRoots() []string { return p.places("skills", skillsDir, p.Manifest.Skills) }

// CommandDirs are the plugin's custom command directories (*.md, to be
// read through Fs).
func (p Plugin) CommandDirs() []string {
	return p.places("commands", commandsDir, p.Manifest.Commands)
}

// AgentDirs are the plugin's agent definition directories (*.md, to be
// read through Fs).
func (p Plugin) AgentDirs() []string { return p.places("agents", agentsDir, p.Manifest.Agents) }

// HookFile is one hooks file of a plugin, read through the plugin's door:
// a settings-shaped JSON object with a "hooks" key.
type HookFile struct {
	// Path names the file (the manifest itself for hooks given inline).
	Path string
	Data []byte
}

// HookFiles reads the plugin's hooks: hooks/hooks.json when it exists, and
// what the manifest's "hooks" names or holds. What cannot be read is a
// sentence in the second result; the hooks of the other files still come.
func (p Plugin) HookFiles() ([]HookFile, []string) {
	if p.fsys == nil {
		return nil, nil
	}
	var out []HookFile
	var problems []string
	read := func(path string, mustExist bool) {
		data, problem := p.readFile(path, "hooks file", mustExist)
		switch {
		case problem != "":
			problems = append(problems, problem)
		case data != nil:
			out = append(out, HookFile{Path: path, Data: data})
		}
	}
	def := filepath.Join(p.Dir, hooksPath)
	read(def, false)
	raw := strings.TrimSpace(string(p.Manifest.Hooks))
	switch {
	case raw == "" || raw == "null":
	case strings.HasPrefix(raw, "{"):
		// Hooks given inline: the manifest is wrapped as a settings file.
		out = append(out, HookFile{Path: filepath.Join(p.Dir, filepath.FromSlash(ManifestPath)), Data: []byte(`{"hooks":` + raw + `}`)})
	default:
		problems = append(problems, p.readNamed("hooks", "a hooks object", p.Manifest.Hooks, def, read)...)
	}
	return out, problems
}

// readNamed reads, with read, each file that the manifest's field names
// in raw (a path or a list of them) other than the default file def,
// which was read already. It returns what could not be read, as
// sentences; object says what else the field may hold.
func (p Plugin) readNamed(field, object string, raw json.RawMessage, def string, read func(path string, mustExist bool)) []string {
	var paths Paths
	if err := json.Unmarshal(raw, &paths); err != nil {
		return []string{fmt.Sprintf("its manifest's %q is neither a path nor %s: %v", field, object, err)}
	}
	var problems []string
	for _, rel := range paths {
		f, why := p.inside(field, rel)
		switch {
		case why != "":
			problems = append(problems, why)
		case f != def:
			read(f, true)
		}
	}
	return problems
}

// maxWalk bounds how many entries counting walks in one directory tree.
const maxWalk = 2000

// Counts are how many skills, commands and agent definitions a plugin
// brings, by their files (a SKILL.md in a skill's directory, a *.md
// command, a *.md definition), for `ralph plugin list` and `ralph doctor`.
// Whether each one reads well is its loader's business.
type Counts struct {
	Skills, Commands, Agents int
}

// Count counts what the plugin brings, through its door.
func (p Plugin) Count() Counts {
	var c Counts
	if p.fsys == nil {
		return c
	}
	for _, root := range p.SkillRoots() {
		entries, _ := afero.ReadDir(p.fsys, root)
		for _, e := range entries {
			if fi, err := p.fsys.Stat(filepath.Join(root, e.Name(), "SKILL.md")); err == nil && fi.Mode().IsRegular() {
				c.Skills++
			}
		}
	}
	c.Commands = p.countMarkdown(p.CommandDirs(), true)
	c.Agents = p.countMarkdown(p.AgentDirs(), false)
	return c
}

// countMarkdown counts the *.md files under dirs (and their
// subdirectories when deep: commands are namespaced by directory).
func (p Plugin) countMarkdown(dirs []string, deep bool) int {
	n, seen := 0, 0
	var walk func(dir string)
	walk = func(dir string) {
		entries, _ := afero.ReadDir(p.fsys, dir)
		for _, e := range entries {
			if seen++; seen > maxWalk {
				return
			}
			switch {
			case e.IsDir() && deep:
				walk(filepath.Join(dir, e.Name()))
			case e.Mode().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".md"):
				n++
			}
		}
	}
	for _, d := range dirs {
		walk(d)
	}
	return n
}

// readFile reads one of the plugin's files (what it is, for the person:
// "hooks file") through the plugin's own door, which follows no link out
// of its directory. It returns the file's bytes, or the one sentence that
// says why it is left out; neither for a missing file that need not be.
func (p Plugin) readFile(path, what string, mustExist bool) ([]byte, string) {
	data, err := rootfs.ReadSmall(p.fsys, path, ManifestLimit)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return nil, ""
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return nil, fmt.Sprintf("its %s %s is a link out of its directory, which ralph does not follow", what, path)
	case err != nil:
		return nil, fmt.Sprintf("its %s %s is left out: %v", what, path, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, ""
}
