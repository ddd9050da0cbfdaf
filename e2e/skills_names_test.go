package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// TestEcosystem2PluginSkillNamespaces: with obra/superpowers added as a
// plugin, the model loads its skill as superpowers:brainstorming (the
// name the plugin's own texts use) and as brainstorming; the system prompt
// names it the namespaced way, as Claude Code does (issue 69).
func TestEcosystem2PluginSkillNamespaces(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	plugin := filepath.Join(t.TempDir(), "superpowers")
	skillCopyDir(t, fixtures.Path(t, "public-plugins", "obra-superpowers"), plugin)
	srv := inlineServer(t, toolScenario(t, "names", [][]toolCall{
		{{"skill", `{"skill":"superpowers:brainstorming"}`}},
		{{"skill", `{"skill":"brainstorming"}`}},
	}, "brainstormed"))
	env := attackEnv(t, home, srv.URL, nil)
	if a := ralph(t, proj, env, nil, "plugin", "add", plugin); a.code != 0 {
		t.Fatalf("plugin add: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	r := ralph(t, proj, env, nil, "-y", "help me design a feature")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3\n%s", len(reqs), r.stderr)
	}
	if system := reqs[0].Request.Messages[0].Content; !strings.Contains(system, "- superpowers:brainstorming: ") {
		t.Errorf("the system prompt does not name superpowers:brainstorming:\n%s", system)
	}
	for i := 1; i <= 2; i++ {
		res := lastToolResult(t, reqs[i].Body)
		if !strings.Contains(res, "Skill brainstorming (plugin)") || strings.Contains(res, "there is no skill") {
			t.Errorf("call %d did not load the skill:\n%s", i, res[:min(len(res), 600)])
		}
	}
}

// TestEcosystem2TitleCaseSkillListed: a skill whose name is Title Case
// with spaces, as Claude Code accepts (8 of Anthropic's own plugins), is
// listed and known by its directory's name, not left out (issue 69).
func TestEcosystem2TitleCaseSkillListed(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(proj, ".claude", "skills", "hook-development", "SKILL.md"),
		"---\nname: Hook Development\ndescription: This skill should be used when the user asks to create a hook.\n---\nWrite hooks.\n")
	env := attackEnv(t, home, "http://127.0.0.1:1", nil)
	r := ralph(t, proj, env, nil, "skills")
	if r.code != 0 || !strings.Contains(r.stdout, "hook-development (Hook Development) — project") || strings.Contains(r.stdout, "left out") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
