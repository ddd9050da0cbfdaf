package plugins

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

var now = time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)

// The agents' table sets the layout in ralph; these tests set Claude
// Code's themselves.
func init() {
	ManifestPath = filepath.Join(".claude-plugin", "plugin.json")
	OfficialMarket = "claude-plugins-official"
	// The tests' directories lie in the temporary directory; the ones
	// about whose a plugin is point this at a directory of their own.
	ModelMayWrite = func(string) bool { return false }
}

// write makes the files of a test plugin under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fullPlugin is a plugin with one of everything.
func fullPlugin(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	write(t, dir, map[string]string{
		".claude-plugin/plugin.json":  `{"name":"` + name + `","version":"1.2.0","description":"A test plugin."}`,
		"hooks/hooks.json":            `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"node \"${CLAUDE_PLUGIN_ROOT}/x.js\""}]}]}}`,
		"skills/review/SKILL.md":      "---\nname: review\ndescription: Reviews.\n---\nBody.\n",
		"skills/notaskill/README.md":  "no skill here",
		"commands/fix.md":             "Fix $ARGUMENTS",
		"commands/git/commit.md":      "Commit.",
		"commands/notes.txt":          "not a command",
		"agents/tester.md":            "---\nname: tester\ndescription: Tests.\n---\nYou test.\n",
		"agents/helpers/deep.md":      "agents are not namespaced, so this is not counted",
		"x.js":                        "process.exit(0)",
		".claude-plugin/README.extra": "",
	})
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return resolved
}

func TestAddListRemove(t *testing.T) {
	cfg := t.TempDir()
	dir := fullPlugin(t, "guard")
	p, err := Add(rootfs.Person(), cfg, dir, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "guard" || p.Manifest.Version != "1.2.0" || !p.Trust.Persons || !strings.HasPrefix(p.Fingerprint, "sha256:") {
		t.Fatalf("Add gave %+v", p)
	}
	fi, err := os.Stat(RecordFile(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("plugins.json has mode %v, want 0600", fi.Mode().Perm())
	}
	list, err := List(rootfs.Person(), cfg, "")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	got := list[0]
	if got.Name != "guard" || got.Dir != dir || got.Changed || len(got.Problems) != 0 || got.Fs() == nil {
		t.Fatalf("listed %+v", got)
	}
	if c := got.Count(); c != (Counts{Skills: 1, Commands: 2, Agents: 1}) {
		t.Errorf("Count = %+v, want 1 skill, 2 commands, 1 agent", c)
	}
	if r := got.SkillRoots(); !slices.Equal(r, []string{filepath.Join(dir, "skills")}) {
		t.Errorf("SkillRoots = %v", r)
	}
	if r := got.CommandDirs(); !slices.Equal(r, []string{filepath.Join(dir, "commands")}) {
		t.Errorf("CommandDirs = %v", r)
	}
	if r := got.AgentDirs(); !slices.Equal(r, []string{filepath.Join(dir, "agents")}) {
		t.Errorf("AgentDirs = %v", r)
	}
	hf, problems := got.HookFiles()
	if len(problems) != 0 || len(hf) != 1 || hf[0].Path != filepath.Join(dir, "hooks", "hooks.json") || !strings.Contains(string(hf[0].Data), "CLAUDE_PLUGIN_ROOT") {
		t.Errorf("HookFiles = %+v, %v", hf, problems)
	}

	// Adding the same directory again refreshes its record.
	write(t, dir, map[string]string{".claude-plugin/plugin.json": `{"name":"guard","version":"1.3.0"}`})
	if list, _ = List(rootfs.Person(), cfg, ""); !list[0].Changed {
		t.Error("a changed manifest is not marked Changed")
	}
	if _, err := Add(rootfs.Person(), cfg, dir, "", now); err != nil {
		t.Fatal(err)
	}
	if list, _ = List(rootfs.Person(), cfg, ""); len(list) != 1 || list[0].Changed || list[0].Manifest.Version != "1.3.0" {
		t.Errorf("after adding again: %+v", list)
	}

	// Another directory under the same name is refused.
	other := fullPlugin(t, "guard")
	if _, err := Add(rootfs.Person(), cfg, other, "", now); !errors.Is(err, ErrNameTaken) {
		t.Errorf("a second guard: %v, want ErrNameTaken", err)
	}

	rec, err := Remove(rootfs.Person(), cfg, "guard")
	if err != nil || rec.Dir != dir {
		t.Fatalf("Remove = %+v, %v", rec, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestPath)); err != nil {
		t.Errorf("Remove touched the plugin's directory: %v", err)
	}
	if _, err := Remove(rootfs.Person(), cfg, "guard"); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing it twice: %v, want ErrNotFound", err)
	}
	if list, _ = List(rootfs.Person(), cfg, ""); len(list) != 0 {
		t.Errorf("after Remove: %+v", list)
	}
}

// TestManifestLinkOut: a plugin.json that is a link out of the plugin's
// directory is refused, and nothing of its target is read or recorded.
func TestManifestLinkOut(t *testing.T) {
	cfg := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.json")
	write(t, filepath.Dir(outside), map[string]string{"secret.json": `{"name":"stolen"}`})
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ManifestPath)); err != nil {
		t.Fatal(err)
	}
	_, err := Add(rootfs.Person(), cfg, dir, "", now)
	if !errors.Is(err, ErrLinkOut) {
		t.Fatalf("Add = %v, want ErrLinkOut", err)
	}
	if s := Sentence(dir, err); strings.Contains(s, "stolen") || !strings.Contains(s, "refused") {
		t.Errorf("Sentence = %q", s)
	}
	if _, err := os.Stat(RecordFile(cfg)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused plugin was recorded: %v", err)
	}

	// A plugin added when it was sound and linked out since is listed
	// with the reason and brings nothing.
	good := fullPlugin(t, "later")
	if _, err := Add(rootfs.Person(), cfg, good, "", now); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(good, ManifestPath)
	if err := os.Remove(m); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, m); err != nil {
		t.Fatal(err)
	}
	list, err := List(rootfs.Person(), cfg, "")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if p := list[0]; p.Fs() != nil || len(p.Problems) != 1 || !strings.Contains(p.Problems[0], "link out") || p.SkillRoots() != nil {
		t.Errorf("listed %+v", p)
	}
}

// TestFilesLinkingOut: a hooks file or a skill linked out of the plugin
// is not read; a manifest path out of the plugin is left out with a
// sentence.
func TestFilesLinkingOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	write(t, dir, map[string]string{
		".claude-plugin/plugin.json": `{"name":"p","commands":["./more","../../etc"],"agents":"/etc","hooks":"./extra/hooks.json","mcpServers":{"x":{}}}`,
		"more/a.md":                  "A",
	})
	secret := filepath.Join(t.TempDir(), "id_rsa")
	write(t, filepath.Dir(secret), map[string]string{"id_rsa": "PRIVATE KEY"})
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "hooks", "hooks.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "skills", "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "skills", "s", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	resolved, _ := filepath.EvalSymlinks(dir)
	if _, err := Add(rootfs.Person(), cfg, resolved, "", now); err != nil {
		t.Fatal(err)
	}
	list, err := List(rootfs.Person(), cfg, "")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	p := list[0]
	if got := p.CommandDirs(); !slices.Equal(got, []string{filepath.Join(resolved, "more")}) {
		t.Errorf("CommandDirs = %v", got)
	}
	if got := p.AgentDirs(); len(got) != 0 {
		t.Errorf("AgentDirs = %v", got)
	}
	all := strings.Join(p.Problems, "\n")
	for _, want := range []string{`"../../etc" leads out`, `"/etc" is absolute`} {
		if !strings.Contains(all, want) {
			t.Errorf("Problems lack %q:\n%s", want, all)
		}
	}
	// Its MCP servers are no problem: they start (config.PluginServers).
	if strings.Contains(all, "MCP") {
		t.Errorf("Problems name its MCP servers:\n%s", all)
	}
	if got := p.MCPServerNames(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("MCPServerNames = %v", got)
	}
	hf, problems := p.HookFiles()
	for _, h := range hf {
		if strings.Contains(string(h.Data), "PRIVATE") {
			t.Fatalf("a hooks file linked out was read: %s", h.Path)
		}
	}
	if j := strings.Join(problems, "\n"); !strings.Contains(j, "link out") || !strings.Contains(j, "extra/hooks.json") {
		t.Errorf("HookFiles problems = %v", problems)
	}
	if c := p.Count(); c.Skills != 0 || c.Commands != 1 {
		t.Errorf("Count = %+v: a SKILL.md linked out counts", c)
	}
}

func TestInlineHooksAndInProject(t *testing.T) {
	project := t.TempDir()
	dir := filepath.Join(project, "tools", "p")
	write(t, dir, map[string]string{".claude-plugin/plugin.json": `{"name":"p","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`})
	cfg := t.TempDir()
	resolved, _ := filepath.EvalSymlinks(dir)
	p, err := Add(rootfs.Person(), cfg, resolved, project, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Trust.Persons {
		t.Error("a plugin inside the project is the person's")
	}
	hf, problems := p.HookFiles()
	if len(problems) != 0 || len(hf) != 1 || !strings.HasPrefix(string(hf[0].Data), `{"hooks":{"Stop"`) {
		t.Errorf("HookFiles = %+v, %v", hf, problems)
	}
	// Outside the project it is still the model's: the walk is the
	// plugin's own (the test's project has no .git, so only the current
	// project's root said so; a record of an older ralph says so too).
	if list, _ := List(rootfs.Person(), cfg, project); list[0].Trust.Persons {
		t.Error("a plugin inside the current project is the person's")
	}
}

func TestNotAPlugin(t *testing.T) {
	cfg := t.TempDir()
	empty := t.TempDir()
	_, err := Add(rootfs.Person(), cfg, empty, "", now)
	if !errors.Is(err, ErrNotPlugin) {
		t.Fatalf("Add(empty dir) = %v", err)
	}
	if s := Sentence("./x", err); !strings.Contains(s, "no Claude Code plugin") {
		t.Errorf("Sentence = %q", s)
	}
	write(t, empty, map[string]string{".claude-plugin/plugin.json": `{"version":"1"}`})
	if _, err := Add(rootfs.Person(), cfg, empty, "", now); !errors.Is(err, ErrManifest) {
		t.Errorf("a manifest without a name: %v", err)
	}
	write(t, empty, map[string]string{".claude-plugin/plugin.json": `{"name":"../x"}`})
	if _, err := Add(rootfs.Person(), cfg, empty, "", now); !errors.Is(err, ErrManifest) {
		t.Errorf("a manifest with a bad name: %v", err)
	}
	_, err = Resolve("block-dangerous-commands@claude-code-hooks", empty)
	if s := Sentence("block-dangerous-commands@claude-code-hooks", err); !strings.Contains(s, "marketplace") {
		t.Errorf("Sentence for a name = %q", s)
	}
	_, err = Resolve("./nope", empty)
	if s := Sentence("./nope", err); !strings.Contains(s, "does not exist") {
		t.Errorf("Sentence for a missing path = %q", s)
	}
}

func TestCorruptRecord(t *testing.T) {
	cfg := t.TempDir()
	write(t, cfg, map[string]string{"ralph/plugins.json": "{"})
	if _, err := List(rootfs.Person(), cfg, ""); !errors.Is(err, ErrCorrupt) {
		t.Errorf("List = %v, want ErrCorrupt", err)
	}
	if list, err := List(rootfs.Person(), "", ""); err != nil || len(list) != 0 {
		t.Errorf("without a config dir: %v, %v", list, err)
	}
}

func TestEnabledPlugins(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"settings.json": `{"enabledPlugins":{"b@m":true,"a@m":true,"off@m":false}}`})
	door, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := EnabledPlugins(door, filepath.Join(dir, "settings.json")); !slices.Equal(got, []string{"a@m", "b@m"}) {
		t.Errorf("EnabledPlugins = %v", got)
	}
	if got := EnabledPlugins(door, filepath.Join(dir, "missing.json")); got != nil {
		t.Errorf("EnabledPlugins(missing) = %v", got)
	}
}
