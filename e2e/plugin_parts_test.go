package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginBringsSkillsCommandsAndAgents: a plugin added from outside
// the project brings its skill (listed in the system prompt by name and
// description, its body left out), its custom command (with its
// argument in place) and its agent definition (listed for spawn_agent),
// and ralph doctor counts each.
func TestPluginBringsSkillsCommandsAndAgents(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	plugin := filepath.Join(filepath.Dir(home), "team-plugin")
	for name, body := range map[string]string{
		".claude-plugin/plugin.json":   `{"name":"team-kit","version":"0.3.0","description":"Our team's kit."}`,
		"skills/tidy-imports/SKILL.md": "---\nname: tidy-imports\ndescription: Sorts and groups Go imports the team's way.\n---\nSKILL-BODY-NOT-IN-PROMPT: run goimports, then group ours last.\n",
		"commands/greet.md":            "---\ndescription: Greets someone\n---\nSay hello to $1 from the team kit.\n",
		"agents/checker.md":            "---\nname: checker\ndescription: Checks a change against the team's rules.\ntools: Read, Grep\n---\nYou check changes.\n",
	} {
		p := filepath.Join(plugin, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := inlineServer(t, `{"name":"plugin-parts","model":"fake-model","loop":true,"responses":[{"text":"ok"}]}`)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_MODEL=fake-model"})
	if r := ralph(t, proj, env, nil, "plugin", "add", plugin); r.code != 0 || !strings.Contains(r.stdout, "0 hooks, 1 skill, 1 command, 1 agent") {
		t.Fatalf("ralph plugin add exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r := ralph(t, proj, env, strings.NewReader("/greet Ada\n"), "chat")
	var system, all string
	for _, req := range srv.Requests() {
		all += string(req.Body) + "\n"
		for _, m := range req.Request.Messages {
			if m.Role == "system" && system == "" {
				system = m.Content
			}
		}
	}
	if !strings.Contains(all, "Say hello to Ada from the team kit.") {
		t.Errorf("the plugin's command did not reach the model:\n%s\nstderr:\n%s", all, r.stderr)
	}
	for _, want := range []string{"tidy-imports", "Sorts and groups Go imports the team's way.", "checker", "Checks a change against the team's rules."} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(all, "SKILL-BODY-NOT-IN-PROMPT") {
		t.Errorf("a skill's body reached the model unasked")
	}
	d := ralph(t, proj, env, nil, "doctor")
	for _, want := range []string{"plugin team-kit: " + plugin + ": 0 hooks, 1 skill, 1 command, 1 agent", "skills: 1 skill found", "commands: 1 custom command found", "agent definitions: 1 agent definition found"} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("ralph doctor lacks %q:\n%s", want, d.stdout)
		}
	}
}
