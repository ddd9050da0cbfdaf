package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHiddenPathsAndAllowReadable: the secret paths of a home directory
// include ralph's configuration and a secret directory's link target; an
// allowed entry opens the secret it names, lies in or lies above, and
// nothing else.
func TestHiddenPathsAndAllowReadable(t *testing.T) {
	home := realDir(t)
	elsewhere := realDir(t)
	if err := os.Symlink(elsewhere, filepath.Join(home, ".aws")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".config", "ralph")
	got, _ := hiddenPaths([]string{home}, []string{cfg}, func(string) string { return "" })
	for _, want := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), elsewhere, filepath.Join(home, ".netrc"),
		filepath.Join(home, ".docker", "config.json"), filepath.Join(home, ".config", "gcloud"), cfg} {
		if !slices.Contains(got, want) {
			t.Errorf("hiddenPaths lacks %s: %q", want, got)
		}
	}
	p := &Policy{HiddenPaths: got}
	p.AllowReadable(filepath.Join(home, ".ssh", "known_hosts"), filepath.Join(home, ".aws"), "relative/.netrc")
	for _, gone := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), elsewhere} {
		if slices.Contains(p.HiddenPaths, gone) {
			t.Errorf("%s is still hidden: %q", gone, p.HiddenPaths)
		}
	}
	if !slices.Contains(p.HiddenPaths, filepath.Join(home, ".netrc")) || !slices.Contains(p.HiddenPaths, cfg) {
		t.Errorf("an entry that names neither opened them: %q", p.HiddenPaths)
	}
	p.AllowReadable(home)
	if len(p.HiddenPaths) != 0 {
		t.Errorf("the home directory allowed, still hidden: %q", p.HiddenPaths)
	}
}

// TestHiddenPathsGrown: the credentials of databases, vaults, clouds,
// password stores and the agents' logins (AgentLogins, which
// workers/agents fills) are hidden, where the variables that move them
// say too; ~/.npmrc only with a token in it.
func TestHiddenPathsGrown(t *testing.T) {
	home, xdg := realDir(t), realDir(t)
	defer func(saved []HiddenPath) { AgentLogins = saved }(AgentLogins)
	AgentLogins = []HiddenPath{{Home: ".agent/auth.json", Env: "CODEX_HOME", Under: "auth.json"}}
	env := map[string]string{"XDG_CONFIG_HOME": xdg, "CODEX_HOME": "/c", "KUBECONFIG": "/k1:/k2:relative", "XDG_DATA_HOME": "rel"}
	got, _ := hiddenPaths([]string{home}, nil, func(k string) string { return env[k] })
	for _, want := range []string{".config/git/credentials", ".agent/auth.json", ".vault-token",
		".pgpass", ".azure", ".terraform.d/credentials.tfrc.json", ".config/hub", ".password-store", ".local/share/keyrings"} {
		if !slices.Contains(got, filepath.Join(home, want)) {
			t.Errorf("hiddenPaths lacks ~/%s", want)
		}
	}
	for _, want := range []string{filepath.Join(xdg, "git/credentials"), filepath.Join(xdg, "gh"), "/c/auth.json", "/k1", "/k2"} {
		if !slices.Contains(got, want) {
			t.Errorf("hiddenPaths lacks %s: %q", want, got)
		}
	}
	if slices.Contains(got, filepath.Join(home, ".npmrc")) || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "rel") }) {
		t.Errorf("an .npmrc that does not exist, or a relative directory, is hidden: %q", got)
	}
	for content, hidden := range map[string]bool{
		"registry=https://r.example/\n":                              false,
		"//r.example/:_authToken=npm_x\n":                            true,
		"_auth=dXNlcjpwYXNz\n":                                       true,
		"//r.example/:username=u\n//r.example/:_password=cGFzcw==\n": true,
	} {
		if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := hiddenPaths([]string{home}, nil, func(string) string { return "" })
		if slices.Contains(got, filepath.Join(home, ".npmrc")) != hidden {
			t.Errorf(".npmrc with %q: hidden %v, want %v", content, !hidden, hidden)
		}
	}
}

// TestLinksInsideSecretDirectories: the target of a link inside a hidden
// directory is hidden too (a dotfile manager's ~/.aws/credentials), and
// opened with it by sandbox_readable; a link to the home directory, to
// a directory under / or into /dev is not followed.
func TestLinksInsideSecretDirectories(t *testing.T) {
	home := realDir(t)
	dotfiles := filepath.Join(home, "dotfiles")
	for _, d := range []string{".aws", ".ssh/keys", "dotfiles/aws", "dotfiles/ssh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".aws/credentials": filepath.Join(dotfiles, "aws/credentials"),
		".ssh/keys/id":     "../../dotfiles/ssh",
		".ssh/home":        home,
		".ssh/usr":         "/usr",
		".ssh/null":        "/dev/null",
		".ssh/dangling":    filepath.Join(home, "nothing"),
		".ssh/inside":      "keys",
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dotfiles, "aws/credentials"), []byte("secret"), 0o600)
	got, links := hiddenPaths([]string{home}, nil, func(string) string { return "" })
	for _, want := range []string{filepath.Join(dotfiles, "aws/credentials"), filepath.Join(dotfiles, "ssh")} {
		if !slices.Contains(got, want) {
			t.Errorf("the link's target %s is not hidden: %q", want, got)
		}
	}
	for _, not := range []string{home, "/usr", "/dev/null", dotfiles} {
		if slices.Contains(got, not) {
			t.Errorf("%s is hidden: %q", not, got)
		}
	}
	p := &Policy{HiddenPaths: got, hiddenLinks: links}
	p.AllowReadable(filepath.Join(home, ".aws"))
	if slices.Contains(p.HiddenPaths, filepath.Join(dotfiles, "aws/credentials")) || !slices.Contains(p.HiddenPaths, filepath.Join(dotfiles, "ssh")) {
		t.Errorf("allowing ~/.aws did not open its link's target, or opened another's: %q", p.HiddenPaths)
	}
}

// TestLinkWalkIsBounded: a hidden directory with more entries than the
// bound is walked no further.
func TestLinkWalkIsBounded(t *testing.T) {
	dir := realDir(t)
	target := realDir(t)
	deep := dir
	for i := 0; i < linkDepth+2; i++ {
		deep = filepath.Join(deep, "d")
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Symlink(target, filepath.Join(deep, "link"))
	if got := linkTargets(dir, []string{"/nonexistent-home"}, false); len(got) != 0 {
		t.Errorf("a link below the depth bound was followed: %q", got)
	}
}

// TestRalphsOwnRecordsAreNotWalked: in ralph's configuration directory a
// person's dotfile links are followed, at the top and in a directory of
// theirs, and a record directory that is itself a link is hidden where it
// lies; the record directories ralph fills (one trust record per
// repository, thousands on a machine used for long) are not walked.
func TestRalphsOwnRecordsAreNotWalked(t *testing.T) {
	home, cfg, dotfiles := realDir(t), realDir(t), realDir(t)
	for _, d := range []string{"git-trust", "mine", "elsewhere/run"} {
		os.MkdirAll(filepath.Join(cfg, d), 0o700)
		os.MkdirAll(filepath.Join(dotfiles, d), 0o700)
	}
	os.MkdirAll(filepath.Join(dotfiles, "trust"), 0o700)
	os.WriteFile(filepath.Join(dotfiles, "config.toml"), []byte("model = \"m\"\n"), 0o600)
	for link, target := range map[string]string{
		"config.toml":       filepath.Join(dotfiles, "config.toml"),
		"mine/prompts":      filepath.Join(dotfiles, "mine"),
		"git-trust/planted": filepath.Join(dotfiles, "git-trust"),
		"run":               filepath.Join(dotfiles, "elsewhere"),
	} {
		if err := os.Symlink(target, filepath.Join(cfg, link)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := hiddenPaths([]string{home}, []string{cfg}, func(string) string { return "" })
	for _, want := range []string{filepath.Join(dotfiles, "config.toml"), filepath.Join(dotfiles, "mine"), filepath.Join(dotfiles, "elsewhere")} {
		if !slices.Contains(got, want) {
			t.Errorf("the link's target %s is not hidden: %q", want, got)
		}
	}
	if slices.Contains(got, filepath.Join(dotfiles, "git-trust")) {
		t.Errorf("ralph's trust records were walked: %q", got)
	}
	// The same directory as a secret of the home's (not ralph's) is
	// walked whole.
	ssh := filepath.Join(home, ".ssh")
	os.MkdirAll(filepath.Join(ssh, "git-trust"), 0o700)
	os.Symlink(filepath.Join(dotfiles, "trust"), filepath.Join(ssh, "git-trust", "key"))
	if got, _ := hiddenPaths([]string{home}, nil, func(string) string { return "" }); !slices.Contains(got, filepath.Join(dotfiles, "trust")) {
		t.Errorf("a link in ~/.ssh/git-trust was not followed: %q", got)
	}
}

// TestHiddenPathsOfBothHomes: when $HOME is not the login home, the
// well-known secrets of both are hidden, and ralph's configuration under
// ~/.config stays hidden when XDG_CONFIG_HOME points elsewhere.
func TestHiddenPathsOfBothHomes(t *testing.T) {
	home, login, xdg := realDir(t), realDir(t), realDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	hs := []string{home, login}
	cfgs := ralphConfigs(hs)
	for _, want := range []string{filepath.Join(xdg, "ralph"), filepath.Join(home, ".config", "ralph"), filepath.Join(login, ".config", "ralph")} {
		if !slices.Contains(cfgs, want) {
			t.Errorf("ralphConfigs lacks %s: %q", want, cfgs)
		}
	}
	got, _ := hiddenPaths(hs, cfgs, func(string) string { return "" })
	for _, h := range hs {
		for _, want := range []string{filepath.Join(h, ".ssh"), filepath.Join(h, ".aws"), filepath.Join(h, ".config", "ralph")} {
			if !slices.Contains(got, want) {
				t.Errorf("hiddenPaths lacks %s: %q", want, got)
			}
		}
	}
	if got := homes(); len(got) == 0 || got[0] != home {
		t.Errorf("homes() = %q, want $HOME %s first", got, home)
	}
}

// TestKeepFromWritingLeavesReadingAlone: a home directory in the
// temporary directory keeps its secrets and ralph's configuration from
// being written there (KeepFromWriting), hidden or not, but what is read
// stays as the hidden list and sandbox_readable say: the secret stays
// hidden, the one the person let commands read stays readable. Keep,
// for a root that holds them, hides them all.
func TestKeepFromWritingLeavesReadingAlone(t *testing.T) {
	home := realDir(t)
	ssh, kube, cfg := filepath.Join(home, ".ssh"), filepath.Join(home, ".kube"), filepath.Join(home, ".config", "ralph")
	p := &Policy{Mode: WorkspaceWrite, HiddenPaths: []string{cfg, kube, ssh}}
	p.AllowReadable(kube)
	p.KeepFromWriting(ssh, kube, cfg, "relative")
	if want := []string{cfg, ssh}; !slices.Equal(p.HiddenPaths, want) {
		t.Errorf("hidden %q, want %q", p.HiddenPaths, want)
	}
	if want := []string{ssh, kube, cfg}; !slices.Equal(p.kept, want) {
		t.Errorf("kept %q, want %q", p.kept, want)
	}
	p.Keep(kube)
	if !slices.Contains(p.HiddenPaths, kube) {
		t.Errorf("Keep did not hide %s: %q", kube, p.HiddenPaths)
	}
	none := &Policy{Mode: FullAccess}
	none.KeepFromWriting(ssh)
	if len(none.kept) > 0 {
		t.Errorf("a policy that confines nothing kept %q", none.kept)
	}
}
