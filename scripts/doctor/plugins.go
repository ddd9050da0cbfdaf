package doctor

import (
	"fmt"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/sessionhooks"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/ralph-dev/ralph/workers/agentdefs"
)

// sourceChecks count what a session here would load from the files
// people bring from Claude Code and codex: skills, custom commands and
// agent definitions (with the plugins' among them), each with how many
// were left out and why. Reading them costs a directory listing and a
// few small files.
func sourceChecks(root string) []Check {
	door, err := rootfs.New(root)
	if err != nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	added, _ := project.AddedPlugins(door, root)
	var out []Check
	set := project.LoadSkills(nil, door, project.PluginSkillRoots(added)...)
	out = append(out, countCheck("skills", len(set.List()), "skill", "skills", set.Warnings()))
	out = append(out, countCheck("commands", len(slash.Customs(door, root, slash.PluginCommandDirs(added)...)), "custom command", "custom commands", nil))
	defs := agentdefs.Load(nil, door, root, home, project.PluginDefinitionDirs(added)...)
	out = append(out, countCheck("agent definitions", len(defs.Defs()), "agent definition", "agent definitions", defs.Warnings))
	cfg, err := config.Load(config.Sources{Fs: door, UserFs: rootfs.Person(), ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: os.Getenv})
	if err == nil {
		l := sessionhooks.Load(sessionhooks.Sources{Root: root, Fs: door, Person: rootfs.Person(), Home: home,
			UserConfigDir: config.UserConfigDir(), Config: cfg, Plugins: sessionhooks.FromPlugins(added)})
		waiting := 0
		for _, e := range l.Entries {
			if e.State == sessionhooks.Waiting {
				waiting++
			}
		}
		ch := countCheck("hooks", len(l.Entries), "hook", "hooks", l.Warnings)
		if waiting > 0 {
			ch.Status = StatusWarning
			ch.Detail += fmt.Sprintf("; %s waiting for your approval", text.Counted(waiting, "is", "are"))
			ch.Fix = "read them with ralph hooks, then ralph hooks approve"
		}
		out = append(out, ch)
		if len(l.Permissions) > 0 {
			out = append(out, permissionsCheck(l.Permissions))
		}
	}
	return out
}

// permissionsCheck lists the permission rules of Claude Code's settings
// files, each with its file: those the approval policy holds to, then
// those it left out and why. A deny or ask rule left out is a warning,
// since the person counts on it; an allow left out only asks more.
func permissionsCheck(perms []sessionhooks.Permission) Check {
	ch := Check{Name: "permissions", Status: StatusOK}
	var taken, out []string
	for _, p := range perms {
		rule := fmt.Sprintf("%s %s (%s)", p.Key, text.Visible(p.Rule), p.File)
		switch {
		case p.Taken && p.Note != "":
			taken = append(taken, rule+": "+p.Note)
		case p.Taken:
			taken = append(taken, rule)
		default:
			out = append(out, rule+": "+p.Note)
			if p.Key != "allow" {
				ch.Status = StatusWarning
				ch.Fix = "ralph holds to Bash, Edit, Write and mcp__ rules; guard the rest another way (ask_before in your ralph config, or the sandbox)"
			}
		}
	}
	ch.Detail = "taken: none"
	if len(taken) > 0 {
		ch.Detail = "taken: " + strings.Join(taken, "; ")
	}
	if len(out) > 0 {
		ch.Detail += "; left out: " + strings.Join(out, "; ")
	}
	return ch
}

// countCheck is one count of sourceChecks: ok, or a warning that says
// the first thing left out.
func countCheck(name string, n int, one, many string, warns []string) Check {
	ch := Check{Name: name, Status: StatusOK, Detail: text.Counted(n, one, many) + " found"}
	if len(warns) > 0 {
		ch.Status = StatusWarning
		ch.Detail += fmt.Sprintf("; %s left out: %s", text.Counted(len(warns), "file", "files"), text.OneLine(text.StripControls(warns[0])))
		ch.Fix = "mend or remove the file the sentence names"
	}
	return ch
}
