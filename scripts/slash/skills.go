package slash

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/tools"
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
			fmt.Fprintf(&b, "  disable-model-invocation: the model is not offered it; you start it as /%s\n", clean(s.FullName()))
		}
		if s.NoPerson {
			b.WriteString("  user-invocable: false: the model may use it; it is not in your slash list\n")
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

// A skill is also a slash command, as in Claude Code: /NAME ARGS (or
// /plugin:NAME ARGS) sends the skill's instructions as the person's
// message, with ARGS for $ARGUMENTS (tools.SkillMessage). A built-in or
// custom command of the same name wins, and says so once.

// skillCommand is the skill the person's /name starts: by its bare name
// or its plugin:name, either in any case (Parse lowers the line's).
func (h *Host) skillCommand(name string) (skills.Skill, bool) {
	if h.Skills == nil || name == "" {
		return skills.Skill{}, false
	}
	for _, s := range h.Skills().List() {
		if strings.EqualFold(s.FullName(), name) || strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return skills.Skill{}, false
}

// runSkill runs skill name as a command; ok is false when no skill has
// that name.
func (h *Host) runSkill(name, args string) (o Outcome, ok bool, err error) {
	sk, ok := h.skillCommand(name)
	if !ok {
		return Outcome{}, false, nil
	}
	msg, err := tools.SkillMessage(sk, h.Root, args)
	if err != nil {
		return Outcome{}, true, fmt.Errorf("/%s: %w", name, err)
	}
	shown := shownPath(sk.File, h.Root)
	h.printf("/%s: sending skill %s (%s)\n", name, clean(sk.FullName()), clean(shown))
	o = Outcome{Send: msg}
	if len(shellLines(msg)) > 0 {
		// As Claude Code runs a skill's !`command` lines when the person
		// starts it, and as a custom command's run: through the one
		// approval policy and the sandbox, asked about like the model's
		// commands, since a project's skill is text the model could have
		// written.
		o.Prepare = func(ctx context.Context) (string, error) {
			return h.runShellLines(ctx, name, shown, msg)
		}
	}
	return o, true, nil
}

// warnedSkills are the skills whose shadowing by a command was told,
// once a process.
var warnedSkills sync.Map

// warnSkillShadowed tells, once, that command name (what it is: "ralph's
// own command", or a custom command's file) runs in place of the skill
// of that name.
func (h *Host) warnSkillShadowed(name, what string) {
	sk, ok := h.skillCommand(name)
	if !ok {
		return
	}
	if _, told := warnedSkills.LoadOrStore(sk.File, true); told {
		return
	}
	h.printf("note: /%s is %s; the skill %s of the same name does not run as /%s\n", name, what, clean(sk.FullName()), name)
}

// SkillCommands are the skills the person may start as commands, for
// Tab and /help: all but those marked user-invocable: false, and those
// a built-in or custom command of the same name shadows; each by the
// name it is known by (plugin:name for a plugin's).
func SkillCommands(set *skills.Set, customs []Custom) []Custom {
	taken := map[string]bool{}
	for _, c := range customs {
		taken[strings.ToLower(c.Name)] = true
	}
	var out []Custom
	for _, s := range set.List() {
		if _, builtin := Lookup(s.Name); s.NoPerson || builtin || taken[s.Name] {
			continue
		}
		out = append(out, Custom{Name: clean(s.FullName()), Description: clean(text.ClipRunes(s.Description, 120, "…")), Shown: "skill"})
	}
	return out
}

// skillHelp is /help's section on the skills the person may start as
// commands; "" when there are none.
func (h *Host) skillHelp() string {
	if h.Skills == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range SkillCommands(h.Skills(), Customs(h.Fs, h.Root, h.Plugins...)) {
		fmt.Fprintf(&b, "- `/%s [args]` — %s\n", strings.ReplaceAll(c.Name, "`", "'"), c.Description)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n**Skills you can start**\n\n" + b.String()
}
