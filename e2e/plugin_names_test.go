package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 90 item 3: plugins installed by their bare names, and commands in
// folders named as Claude Code and their READMEs name them, on the
// layouts of testdata/plugins90 (ORIGIN.md there).

// joinSent is everything the stand-in model was sent.
func joinSent(reqs []string) string { return strings.Join(reqs, "\n") }

// TestPluginBareNameInstall: `ralph plugin add compound-engineering`, as
// its README says, installs it from the one added marketplace that lists
// it; its command in commands/workflows/ is /workflows:plan, as the
// README invokes it, and reaches the model with its argument. With a
// second marketplace listing it, the bare name is refused in one sentence
// naming both; once the official marketplace lists it too, the official
// one's is taken, as Claude Code takes it.
func TestPluginBareNameInstall(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	src := filepath.Join(filepath.Dir(home), "src")
	every, fork, official := filepath.Join(src, "every"), filepath.Join(src, "every-fork"), filepath.Join(src, "official")
	copyTree(t, plugins90("every"), every)
	copyTree(t, plugins90("every"), fork)
	copyTree(t, plugins90("official"), official)
	forkFile := filepath.Join(fork, ".claude-plugin", "marketplace.json")
	data, err := os.ReadFile(forkFile)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, forkFile, strings.Replace(string(data), `"every-marketplace"`, `"every-fork"`, 1))
	srv := inlineServer(t, `{"name":"names","model":"fake-model","loop":true,"responses":[{"text":"ok"}]}`)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_MODEL=fake-model"})

	mustRalph(t, proj, env, "Added marketplace every-marketplace", "plugin", "marketplace", "add", every)
	plugin := filepath.Join(every, "plugins", "compound-engineering")
	mustRalph(t, proj, env, "Added plugin compound-engineering 2.9.0 from "+plugin+": 0 hooks, 0 skills, 1 command, 0 agents.", "plugin", "add", "compound-engineering")
	r := ralph(t, proj, env, nil, "/workflows:plan a login page")
	var bodies []string
	for _, req := range srv.Requests() {
		bodies = append(bodies, string(req.Body))
	}
	if r.code != 0 || !strings.Contains(joinSent(bodies), "Plan the feature: a login page") {
		t.Errorf("/workflows:plan did not reach the model: exit %d\nsent:\n%s\nstderr:\n%s", r.code, joinSent(bodies), r.stderr)
	}

	mustRalph(t, proj, env, "Removed plugin compound-engineering", "plugin", "remove", "compound-engineering")
	mustRalph(t, proj, env, "Added marketplace every-fork", "plugin", "marketplace", "add", fork)
	refused(t, proj, env, "compound-engineering is listed by the marketplaces every-fork and every-marketplace; add it as compound-engineering@every-fork or compound-engineering@every-marketplace",
		"plugin", "add", "compound-engineering")
	mustRalph(t, proj, env, "Added marketplace claude-plugins-official", "plugin", "marketplace", "add", official)
	mustRalph(t, proj, env, "Added plugin compound-engineering 0.0.1 from "+filepath.Join(official, "external_plugins", "compound-engineering"), "plugin", "add", "compound-engineering")
	refused(t, proj, env, "no added marketplace lists a plugin of that name", "plugin", "add", "no-such-plugin")
}

// TestFolderCommandNames: trailofbits' config command, installed as its
// README says (.claude/commands/trailofbits/config.md), is
// /trailofbits:config; /config, Claude Code's built-in name, is not it:
// that line goes to the model as the text it is.
func TestFolderCommandNames(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	copyTree(t, plugins90("trailofbits", "commands"), filepath.Join(proj, ".claude", "commands"))
	srv := inlineServer(t, `{"name":"names","model":"fake-model","loop":true,"responses":[{"text":"ok"}]}`)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_MODEL=fake-model"})
	sent := func(line string) string {
		before := len(srv.Requests())
		r := ralph(t, proj, env, nil, line)
		if r.code != 0 {
			t.Fatalf("ralph %q: exit %d\n%s", line, r.code, r.stderr)
		}
		var bodies []string
		for _, req := range srv.Requests()[before:] {
			bodies = append(bodies, string(req.Body))
		}
		return joinSent(bodies)
	}
	if got := sent("/trailofbits:config hooks"); !strings.Contains(got, "Trail of Bits recommendations. Focus: hooks") {
		t.Errorf("/trailofbits:config sent:\n%s", got)
	}
	if got := sent("/config hooks"); strings.Contains(got, "Trail of Bits") {
		t.Errorf("/config ran the folder's command, taking Claude Code's built-in name:\n%s", got)
	}
}
