package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// skillsCommand is `ralph skills`: the skills a session here would offer
// the model, and where each came from. A malformed skill is a warning of
// one sentence and the command still succeeds, as `ralph mcp list` does
// with a malformed server: the other skills work.
func (c *cli) skillsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "skills",
		Short: "List the skills the model may load, and where each came from (--json)",
		Long: `List the skills (Agent Skills: a directory holding a SKILL.md) a session in
this project offers the model: the project's, yours, your plugins' and
ralph's own ~/.config/ralph/skills/ (docs/skills.md says where each is read).
Each shows its name, where it came from (project, user, ralph or a plugin),
its SKILL.md and its description, as the system prompt lists it. A skill
ralph leaves out (malformed, a link out of its directory, a name taken by
another) is one warning line; the command still succeeds.`,
		Example: `  ralph skills
  ralph skills --json | jq -r '.skills[].name'`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			dir, door, err := c.door()
			if err != nil {
				return err
			}
			added, _ := project.AddedPlugins(door, dir)
			return writeSkills(c.stdout(), project.LoadSkills(nil, door, project.PluginSkillRoots(added)...), dir, c.f.json)
		},
	}
}

// skillJSON is one skill in `ralph skills --json`.
type skillJSON struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Source       string   `json:"source"`
	Plugin       string   `json:"plugin,omitempty"`
	Path         string   `json:"path"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
}

// writeSkills prints set's skills for a person, or as JSON.
func writeSkills(w io.Writer, set *skills.Set, root string, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprint(w, slash.SkillsText(set, root))
		return err
	}
	out := []skillJSON{}
	for _, s := range set.List() {
		out = append(out, skillJSON{Name: s.Name, Description: s.Description, Source: s.Source.String(), Plugin: s.Plugin,
			Path: s.File, AllowedTools: s.AllowedTools})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"skills": out, "warnings": nonNil(set.Warnings())})
}
