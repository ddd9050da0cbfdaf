package project

import (
	"fmt"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers/agentdefs"
)

// The Claude Code plugins the person added with `ralph plugin add`
// (memory/plugins) join every session: their hooks, skills and agent
// definitions are handed to the same loaders as the person's and the
// project's, each read through the plugin's own door. They are listed
// once, when the session opens, with the rest of what it reads.

// AddedPlugins are the plugins the person added, as they lie now, for a
// session in root ("" outside a project); warnings are one sentence for
// each plugin (or part of one) left out. A test's in-memory project has
// none: it must not read the person's record.
func AddedPlugins(fsys afero.Fs, root string) ([]plugins.Plugin, []string) {
	if !rootfs.IsReal(fsys) {
		return nil, nil
	}
	list, err := plugins.List(rootfs.Person(), config.UserConfigDir(), root)
	if err != nil {
		return nil, []string{fmt.Sprintf("plugins are left out: %v", err)}
	}
	var warnings []string
	for _, p := range list {
		for _, pr := range p.Problems {
			warnings = append(warnings, fmt.Sprintf("plugin %s: %s", p.Name, pr))
		}
	}
	return list, warnings
}

// PluginSkillRoots are the plugins' skills directories, each read through
// its plugin's door; a plugin's skill grants no tool (memory/skills).
func PluginSkillRoots(list []plugins.Plugin) []skills.Root {
	var out []skills.Root
	for _, p := range list {
		for _, dir := range p.SkillRoots() {
			out = append(out, skills.Root{Source: skills.Plugin, Dir: dir, FSys: p.Fs(), Plugin: p.Name})
		}
	}
	return out
}

// PluginDefinitionDirs are the plugins' agents/ folders. A plugin's
// definitions count as the project's: their tools may only narrow the
// parent's, as a plugin's skills grant nothing.
func PluginDefinitionDirs(list []plugins.Plugin) []agentdefs.Dir {
	var out []agentdefs.Dir
	for _, p := range list {
		for _, dir := range p.AgentDirs() {
			out = append(out, agentdefs.Dir{Fs: p.Fs(), Path: dir, Shown: p.Shown(dir), Source: agentdefs.Project, Plugin: p.Name})
		}
	}
	return out
}
