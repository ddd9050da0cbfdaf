package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// Issue 69's second round of names: a skill is a slash command
// (/superpowers:brainstorming topic, /brainstorming topic) as in Claude
// Code, a plugin's command is /plugin:NAME, and a skill marked
// disable-model-invocation is the person's to start, not the model's.

// TestEcosystem2SkillAsCommandOneShot: `ralph '/superpowers:brainstorming
// topic'` and `ralph '/brainstorming topic'` send the skill's body as the
// person's message, with topic as its ARGUMENTS, as claude -p does.
func TestEcosystem2SkillAsCommandOneShot(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	plugin := filepath.Join(t.TempDir(), "superpowers")
	skillCopyDir(t, fixtures.Path(t, "public-plugins", "obra-superpowers"), plugin)
	for _, line := range []string{"/superpowers:brainstorming a todo app", "/brainstorming a todo app"} {
		srv := inlineServer(t, toolScenario(t, "brainstorm", nil, "brainstormed"))
		env := attackEnv(t, home, srv.URL, nil)
		if a := ralph(t, proj, env, nil, "plugin", "add", plugin); a.code != 0 {
			t.Fatalf("plugin add: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
		}
		r := ralph(t, proj, env, nil, "-y", line)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", line, r.code, r.stdout, r.stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests, want 1", line, len(reqs))
		}
		msgs := reqs[0].Request.Messages
		sent := msgs[len(msgs)-1].Content
		for _, want := range []string{"# Brainstorming Ideas Into Designs", "ARGUMENTS: a todo app", "Base directory for this skill: "} {
			if !strings.Contains(sent, want) {
				t.Errorf("%s: the message does not hold %q:\n%s", line, want, sent[:min(len(sent), 800)])
			}
		}
		if strings.HasPrefix(strings.TrimSpace(sent), "/") {
			t.Errorf("%s went to the model as written", line)
		}
	}
}

// TestEcosystem2PluginCommandNamespaced: a plugin's command runs as
// /plug:cmd and, when no other plugin has one of its name, as /cmd; when
// two plugins have it, /cmd says which names exist.
func TestEcosystem2PluginCommandNamespaced(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	base := t.TempDir()
	mk := func(name, body string) string {
		dir := filepath.Join(base, name)
		skillWrite(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `{"name":"`+name+`","version":"1.0.0"}`)
		skillWrite(t, filepath.Join(dir, "commands", "cmd.md"), "---\ndescription: say the word\n---\n"+body+" $ARGUMENTS\n")
		skillWrite(t, filepath.Join(dir, "commands", "only-"+name+".md"), "The only command of "+name+": $ARGUMENTS\n")
		return dir
	}
	plug, other := mk("plug", "Say the plug word:"), mk("other", "Say the other word:")
	srv := inlineServer(t, `{"name":"cmd","responses":[{"text":"said"},{"text":"said"},{"text":"said"}]}`)
	env := attackEnv(t, home, srv.URL, nil)
	for _, dir := range []string{plug, other} {
		if a := ralph(t, proj, env, nil, "plugin", "add", dir); a.code != 0 {
			t.Fatalf("plugin add: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
		}
	}
	for _, c := range []struct{ line, want string }{
		{"/plug:cmd hello", "Say the plug word: hello"},
		{"/other:cmd hello", "Say the other word: hello"},
		{"/only-plug there", "The only command of plug: there"},
	} {
		n := len(srv.Requests())
		r := ralph(t, proj, env, nil, "-y", c.line)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c.line, r.code, r.stdout, r.stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != n+1 {
			t.Fatalf("%s: %d requests, want %d", c.line, len(reqs), n+1)
		}
		msgs := reqs[n].Request.Messages
		if got := msgs[len(msgs)-1].Content; !strings.Contains(got, c.want) {
			t.Errorf("%s sent %q, want %q", c.line, got, c.want)
		}
	}
	n := len(srv.Requests())
	r := ralph(t, proj, env, nil, "-y", "/cmd hello")
	if r.code == 0 || !strings.Contains(r.stderr, "/cmd is a command of several plugins: type /plug:cmd or /other:cmd") && !strings.Contains(r.stderr, "/cmd is a command of several plugins: type /other:cmd or /plug:cmd") {
		t.Errorf("/cmd of two plugins: exit %d\n%s", r.code, r.stderr)
	}
	if len(srv.Requests()) != n {
		t.Error("the ambiguous /cmd reached the model")
	}
}

// TestEcosystem2NoModelSkillIsThePersons: the public skills of
// claude-code-hooks set disable-model-invocation: true; the model's list
// leaves them out and its skill call is refused, while the person's
// `/board` sends the board's body.
func TestEcosystem2NoModelSkillIsThePersons(t *testing.T) {
	t.Parallel()
	proj, home, public := skillsProject(t)
	srv := inlineServer(t, toolScenario(t, "nomodel", [][]toolCall{{{"skill", `{"skill":"board"}`}}}, "refused"))
	env := attackEnv(t, home, srv.URL, nil)
	r := ralph(t, proj, env, nil, "-y", "show me the bounty board")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	system := reqs[0].Request.Messages[0].Content
	for _, s := range public {
		if strings.Contains(system, "- "+s.name+": ") {
			t.Errorf("the system prompt lists %s, which is the person's to start", s.name)
		}
	}
	if !strings.Contains(system, "- release-notes: ") {
		t.Errorf("the person's own skill is not listed:\n%s", system)
	}
	if res := toolResults(reqs[1])["skill"]; len(res) != 1 || !strings.Contains(res[0], "they run it as /board") {
		t.Errorf("the model's skill call: %q", res)
	}
	// The person's /board sends the board's body, with its arguments.
	srv2 := inlineServer(t, toolScenario(t, "board", nil, "shown"))
	r = ralph(t, proj, attackEnv(t, home, srv2.URL, nil), nil, "-y", "/board this week")
	if r.code != 0 || len(srv2.Requests()) != 1 {
		t.Fatalf("/board: exit %d\n%s", r.code, r.stderr)
	}
	msgs := srv2.Requests()[0].Request.Messages
	if sent := msgs[len(msgs)-1].Content; !strings.Contains(sent, "# Bounty board") || !strings.Contains(sent, "ARGUMENTS: this week") {
		t.Errorf("/board sent %q", sent)
	}
}
