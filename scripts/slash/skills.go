package slash

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// runSkills is /skills: the session's skills, as its system prompt lists
// them, with where each came from, as ralph skills shows them.
func runSkills(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.Skills == nil {
		return Outcome{}, fmt.Errorf("/skills: skills are %w here; `ralph skills` lists them", ErrNotAvailable)
	}
	h.printf("%s", SkillsText(h.Skills(), h.Root))
	return Outcome{}, nil
}

// SkillsText lists skills for a person: per skill its name, where it came
// from (project, user, ralph's own or a plugin's) and its SKILL.md, then
// its description; then what was left out, one sentence each. Everything
// a file wrote is stripped of terminal controls.
func SkillsText(set *skills.Set, root string) string {
	var b strings.Builder
	list := set.List()
	if len(list) == 0 {
		b.WriteString(noSkills())
	}
	for _, s := range list {
		name := s.FullName()
		if s.Title != "" {
			name += " (" + s.Title + ")"
		}
		fmt.Fprintf(&b, "%s — %s — %s\n", clean(name), SkillSource(s), clean(shownPath(s.File, root)))
		fmt.Fprintf(&b, "  %s\n", clean(text.ClipRunes(s.Description, 300, "…")))
		if len(s.AllowedTools) > 0 {
			fmt.Fprintf(&b, "  allowed-tools: %s (not applied: ralph pre-approves nothing for a skill, docs/skills.md)\n", clean(strings.Join(s.AllowedTools, ", ")))
		}
		if s.NoModel {
			b.WriteString("  disable-model-invocation: ralph offers it to the model all the same (docs/skills.md)\n")
		}
	}
	for _, w := range set.Warnings() {
		fmt.Fprintf(&b, "warning: %s\n", clean(w))
	}
	return b.String()
}

// noSkills says where ralph looked, from the agents' table.
func noSkills() string {
	var project, home []string
	for _, d := range agents.SkillDirs() {
		project = append(project, filepath.ToSlash(d)+"/")
		home = append(home, "~/"+filepath.ToSlash(d)+"/")
	}
	project = append(project, ".agents/skills/")
	return fmt.Sprintf("no skills found: ralph looks in %s of the project, %s and ~/.config/ralph/skills/ (one directory per skill, holding a SKILL.md)\n",
		strings.Join(project, " and "), strings.Join(home, ", "))
}

// SkillSource is where a skill came from, as ralph skills says it.
func SkillSource(s skills.Skill) string {
	if s.Source == skills.Plugin && s.Plugin != "" {
		return "plugin " + s.Plugin
	}
	return s.Source.String()
}

// shownPath is path relative to the project when it lies inside it.
func shownPath(path, root string) string {
	if r, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return path
}
