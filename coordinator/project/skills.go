package project

import (
	"fmt"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// LoadSkills finds the skills of the project whose door is door: ralph's
// own in the person's config, the person's ~/.claude/skills, the skills
// directories of plugins (PluginSkillRoots), and the project's
// .claude/skills and .agents/skills (memory/skills), each read through a
// door of its own. A session loads them once, at its start
// (Open), and `ralph skills` lists them. Warnings are one sentence each
// (a malformed SKILL.md, a link out of its directory, a clash of names).
// keep is the session's door for what enters a request (memory/kept),
// nil where nothing is sent (`ralph skills`).
func LoadSkills(keep *kept.Door, door *rootfs.Fs, plugins ...skills.Root) *skills.Set {
	home, _ := os.UserHomeDir()
	roots, warnings := skills.Roots(door, home, config.UserConfigDir(), agents.SkillDirs(), plugins)
	for i := range roots {
		roots[i].Keep = keep
	}
	set := skills.Load(roots)
	set.Warn(warnings...)
	return set
}

// loadSkills is the session's skills: none for a test's in-memory file
// system, which has no project door and must not read the person's.
func (p *Project) loadSkills() {
	door, ok := p.Fs.(*rootfs.Fs)
	if !ok {
		return
	}
	p.Skills = LoadSkills(p.Door, door, PluginSkillRoots(p.Plugins)...)
	for _, w := range p.Skills.Warnings() {
		p.notify("warning: " + text.StripControls(w))
	}
}

// skillsPrompt is the system prompt's list of skills, by name and
// description only, sorted by name: it is written once, at the session's
// start, and a resumed session keeps its first system prompt, so the
// prompt's prefix stays the same, byte for byte. The bodies are loaded by
// the skill tool.
func (p *Project) skillsPrompt() string {
	return SkillsList(p.Skills)
}

// SkillsList is the list of set's skills a system prompt holds, the main
// agent's and a child's that is offered the skill tool; "" when there is
// none.
func SkillsList(set *skills.Set) string {
	offered := set.ForModel()
	if len(offered) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nSkills: before a task one of these describes, call skill with its name to load its instructions, then follow them.\n")
	for _, s := range offered {
		fmt.Fprintf(&b, "- %s: %s\n", s.FullName(), s.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}
