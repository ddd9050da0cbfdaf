package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// The real marketplace of wshobson/agents ("claude-code-workflows"), with
// three of the plugins it lists, copied unchanged (public-plugins in
// memory/fixtures, ORIGIN.md there says from where).
const wshobsonMarket = "claude-code-workflows"

func wshobsonDir(t *testing.T) string {
	return fixtures.Path(t, "public-plugins", "wshobson-agents")
}

// copyTree copies the directory src to dst (which must not exist).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-R", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", src, dst, err, out)
	}
}

// gitRepoOf makes dir a git repository with everything in it committed,
// and gives back its file:// URL.
func gitRepoOf(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", "git init -q -b main && git add -A && git commit -qm copy")
	cmd.Dir, cmd.Env = dir, cleanEnv(t, gitEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v\n%s", dir, err, out)
	}
	return "file://" + dir
}

// mustRalph runs ralph and fails the test unless it exits 0 with want in
// its standard output.
func mustRalph(t *testing.T, dir string, env []string, want string, args ...string) runResult {
	t.Helper()
	r := ralph(t, dir, env, nil, args...)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("ralph %s: exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

// refused checks that ralph exits 2 with one line of standard error
// saying want.
func refused(t *testing.T, dir string, env []string, want string, args ...string) {
	t.Helper()
	r := ralph(t, dir, env, nil, args...)
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("ralph %s: exit %d, want 2 and one line saying %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
}

// TestMarketAddDirectoryInstallsByName: the README's way: the marketplace
// is added by its directory (read where it lies) under the name its
// marketplace.json gives, not the directory's, and python-development is
// installed as python-development@claude-code-workflows. Its command
// reaches the model with its argument, its skills and agents are offered
// in the system prompt, and neither the project nor the marketplace's
// directory gets a file.
func TestMarketAddDirectoryInstallsByName(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	market := filepath.Join(filepath.Dir(home), "src", "agents")
	copyTree(t, wshobsonDir(t), market)
	srv := inlineServer(t, `{"name":"market","model":"fake-model","loop":true,"responses":[{"text":"ok"}]}`)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_MODEL=fake-model"})

	mustRalph(t, proj, env, "Added marketplace "+wshobsonMarket+" from "+market+" (read where it lies): 92 plugins.", "plugin", "marketplace", "add", market)
	mustRalph(t, proj, env, wshobsonMarket+"  "+market, "plugin", "marketplace", "list")
	// The directory's name is no marketplace's.
	refused(t, proj, env, "no marketplace named agents is added", "plugin", "add", "python-development@agents")
	dir := filepath.Join(market, "plugins", "python-development")
	mustRalph(t, proj, env, "Added plugin python-development 1.2.3 from "+dir+": 0 hooks, 16 skills, 1 command, 3 agents.",
		"plugin", "add", "python-development@"+wshobsonMarket)

	if out, _ := exec.Command("git", "-C", proj, "status", "--porcelain", "--ignored").Output(); len(out) != 0 {
		t.Errorf("the marketplace left files in the project:\n%s", out)
	}
	r := ralph(t, proj, env, strings.NewReader("/python-scaffold a FastAPI service for invoices\n"), "chat")
	var system, all string
	for _, req := range srv.Requests() {
		all += string(req.Body) + "\n"
		for _, m := range req.Request.Messages {
			if m.Role == "system" && system == "" {
				system = m.Content
			}
		}
	}
	if !strings.Contains(all, "You are a Python project architecture expert") || !strings.Contains(all, "a FastAPI service for invoices") {
		t.Errorf("the plugin's /python-scaffold did not reach the model with its argument:\n%s\nstderr:\n%s", all, r.stderr)
	}
	for _, want := range []string{"async-python-patterns", "Master Python asyncio", "python-development-fastapi-pro"} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
	if out, err := exec.Command("diff", "-r", wshobsonDir(t), market).CombinedOutput(); err != nil {
		t.Errorf("the marketplace's directory changed: %v\n%s", err, out)
	}
}

// TestMarketPluginWithoutManifest: the manifest is optional, as in Claude
// Code: debugging-toolkit without its .claude-plugin/ is installed from
// the marketplace under its entry's name, with its command and agents
// found in their default folders; added by path, it is named after its
// directory. A directory with none of a plugin's parts is still refused.
func TestMarketPluginWithoutManifest(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	market := filepath.Join(filepath.Dir(home), "src", "agents")
	copyTree(t, wshobsonDir(t), market)
	plugin := filepath.Join(market, "plugins", "debugging-toolkit")
	if err := os.RemoveAll(filepath.Join(plugin, ".claude-plugin")); err != nil {
		t.Fatal(err)
	}
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", nil)
	mustRalph(t, proj, env, "92 plugins", "plugin", "marketplace", "add", market)
	mustRalph(t, proj, env, "Added plugin debugging-toolkit from "+plugin+": 0 hooks, 0 skills, 1 command, 2 agents.",
		"plugin", "add", "debugging-toolkit@"+wshobsonMarket)
	mustRalph(t, proj, env, "Removed plugin debugging-toolkit", "plugin", "remove", "debugging-toolkit")

	other := filepath.Join(filepath.Dir(home), "mine", "debug-kit")
	copyTree(t, plugin, other)
	mustRalph(t, proj, env, "Added plugin debug-kit from "+other+": 0 hooks, 0 skills, 1 command, 2 agents.", "plugin", "add", other)
	if l := listPlugins(t, proj, env); len(l.Plugins) != 1 || l.Plugins[0].Name != "debug-kit" || len(l.Plugins[0].Problems) != 0 {
		t.Errorf("ralph plugin list: %+v", l)
	}
	refused(t, proj, env, "holds no .claude-plugin/plugin.json and none of commands/, agents/, skills/, hooks/hooks.json", "plugin", "add", proj)
}

// TestMarketByGitURL: a marketplace added by a git URL is cloned with the
// person's git into ralph's plugin store under the person's home, never
// into the project, and with no hook of the person's git run (their
// global core.hooksPath has a post-checkout hook); a plugin it lists by a
// {"source":"url"} entry is cloned too.
func TestMarketByGitURL(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	base := filepath.Dir(home)
	src := filepath.Join(base, "remote", "agents")
	copyTree(t, wshobsonDir(t), src)
	url := gitRepoOf(t, src)

	// A second marketplace lists a plugin by its own repository.
	pluginRepo := filepath.Join(base, "remote", "debug-plugin")
	copyTree(t, filepath.Join(wshobsonDir(t), "plugins", "debugging-toolkit"), pluginRepo)
	pluginURL := gitRepoOf(t, pluginRepo)
	team := filepath.Join(base, "remote", "team")
	mustWrite(t, filepath.Join(team, ".claude-plugin", "marketplace.json"),
		`{"name":"team-tools","owner":{"name":"t"},"plugins":[{"name":"debugging-toolkit","source":{"source":"url","url":"`+pluginURL+`"}}]}`)
	teamURL := gitRepoOf(t, team)

	hooksDir := filepath.Join(base, "githooks")
	marker := filepath.Join(base, "hook-ran")
	mustWrite(t, filepath.Join(hooksDir, "post-checkout"), "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(hooksDir, "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(base, "gitconfig")
	mustWrite(t, global, "[core]\n\thooksPath = "+hooksDir+"\n")
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", []string{"GIT_CONFIG_GLOBAL=" + global})

	store := filepath.Join(home, ".local", "share", "ralph", "plugins", "marketplaces")
	mustRalph(t, proj, env, "Added marketplace "+wshobsonMarket+" from "+url+" (cloned into "+filepath.Join(store, wshobsonMarket)+"): 92 plugins.",
		"plugin", "marketplace", "add", url)
	mustRalph(t, proj, env, "Added plugin python-development 1.2.3 from "+filepath.Join(store, wshobsonMarket, "plugins", "python-development"),
		"plugin", "add", "python-development@"+wshobsonMarket)
	mustRalph(t, proj, env, "Added marketplace team-tools", "plugin", "marketplace", "add", teamURL)
	cloned := filepath.Join(home, ".local", "share", "ralph", "plugins", "sources", "team-tools", "debugging-toolkit")
	mustRalph(t, proj, env, "Added plugin debugging-toolkit 1.2.1 from "+cloned+": 0 hooks, 0 skills, 1 command, 2 agents.",
		"plugin", "add", "debugging-toolkit@team-tools")
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the person's post-checkout hook ran for ralph's clone")
	}
	if out, _ := exec.Command("git", "-C", proj, "status", "--porcelain", "--ignored").Output(); len(out) != 0 {
		t.Errorf("cloning left files in the project:\n%s", out)
	}
	if l := listPlugins(t, proj, env); len(l.Plugins) != 2 {
		t.Errorf("ralph plugin list: %+v", l)
	}

	// Removing a marketplace forgets its plugins and deletes its clones.
	mustRalph(t, proj, env, "Removed marketplace team-tools and its plugins debugging-toolkit.", "plugin", "marketplace", "remove", "team-tools")
	if _, err := os.Stat(cloned); err == nil {
		t.Errorf("the plugin's clone %s is still there", cloned)
	}
	if l := listPlugins(t, proj, env); len(l.Plugins) != 1 || l.Plugins[0].Name != "python-development" {
		t.Errorf("after removing team-tools: %+v", l)
	}
}

// TestMarketRefusedForms: each form ralph does not install is one
// sentence and exit 2, and nothing is recorded: the git-subdir source of
// the real marketplace (pensyve), an npm source, a source leading out of
// the marketplace, a URL to a marketplace.json, a plugin the marketplace
// does not list, and a directory without a marketplace.json.
func TestMarketRefusedForms(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	base := filepath.Dir(home)
	market := filepath.Join(base, "src", "agents")
	copyTree(t, wshobsonDir(t), market)
	odd := filepath.Join(base, "src", "odd")
	mustWrite(t, filepath.Join(odd, ".claude-plugin", "marketplace.json"), `{"name":"odd","owner":{"name":"t"},"plugins":[
		{"name":"from-npm","source":{"source":"npm","package":"@acme/plugin"}},
		{"name":"outside","source":"../../home"}]}`)
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", nil)
	mustRalph(t, proj, env, "92 plugins", "plugin", "marketplace", "add", market)
	mustRalph(t, proj, env, "Added marketplace odd", "plugin", "marketplace", "add", odd)

	refused(t, proj, env, `pensyve's source is of the "git-subdir" form, which ralph does not install`, "plugin", "add", "pensyve@"+wshobsonMarket)
	refused(t, proj, env, `from-npm's source is of the "npm" form, which ralph does not install`, "plugin", "add", "from-npm@odd")
	refused(t, proj, env, `outside's source "../../home" leads out of the marketplace's directory`, "plugin", "add", "outside@odd")
	refused(t, proj, env, "claude-code-workflows lists no plugin named no-such-plugin", "plugin", "add", "no-such-plugin@"+wshobsonMarket)
	refused(t, proj, env, "a URL to a marketplace.json is not supported", "plugin", "marketplace", "add", "https://example.com/marketplace.json")
	refused(t, proj, env, "holds no .claude-plugin/marketplace.json", "plugin", "marketplace", "add", proj)
	refused(t, proj, env, "is neither a directory here, a git URL nor a GitHub owner/repo", "plugin", "marketplace", "add", "./nowhere")
	refused(t, proj, env, "no marketplace named gone is added", "plugin", "marketplace", "remove", "gone")
	if l := listPlugins(t, proj, env); len(l.Plugins) != 0 {
		t.Errorf("a refused plugin was recorded: %+v", l)
	}
}

// TestMarketUpdate: `ralph plugin update` clones a marketplace added by
// URL anew and reads its plugins again: a new version of
// debugging-toolkit pushed to the marketplace's repository is the one
// installed after it; a plugin ralph does not know is exit 2.
func TestMarketUpdate(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	src := filepath.Join(filepath.Dir(home), "remote", "agents")
	copyTree(t, wshobsonDir(t), src)
	url := gitRepoOf(t, src)
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", nil)
	mustRalph(t, proj, env, "92 plugins", "plugin", "marketplace", "add", url)
	mustRalph(t, proj, env, "Added plugin debugging-toolkit 1.2.1", "plugin", "add", "debugging-toolkit@"+wshobsonMarket)

	manifest := filepath.Join(src, "plugins", "debugging-toolkit", ".claude-plugin", "plugin.json")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, manifest, strings.Replace(string(data), `"version": "1.2.1"`, `"version": "1.3.0"`, 1))
	mustWrite(t, filepath.Join(src, "plugins", "debugging-toolkit", "commands", "trace.md"), "---\ndescription: Traces a call\n---\nTrace $ARGUMENTS.\n")
	gitCommitAll(t, src)

	mustRalph(t, proj, env, "Updated plugin debugging-toolkit (version 1.2.1 -> 1.3.0).", "plugin", "update")
	l := listPlugins(t, proj, env)
	if len(l.Plugins) != 1 || l.Plugins[0].Version != "1.3.0" || len(l.Plugins[0].Problems) != 0 {
		t.Errorf("after the update: %+v", l)
	}
	mustRalph(t, proj, env, "2 commands", "plugin", "list")
	mustRalph(t, proj, env, "Updated plugin debugging-toolkit (version 1.3.0).", "plugin", "update", "debugging-toolkit")
	refused(t, proj, env, "no plugin named nope is added", "plugin", "update", "nope")
}
