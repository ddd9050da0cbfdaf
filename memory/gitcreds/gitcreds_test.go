package gitcreds

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// checkout is .git/config as actions/checkout leaves it, with a remote
// that carries a password and a credential helper that prints one.
var checkout = `[core]
	repositoryformatversion = 0
	bare = false
[remote "origin"]
	url = https://me:` + token + `@github.com/o/r.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "mirror"]
	url = https://` + token + `@example.com/r.git
	pushurl = ssh://git@example.com/r.git
[http "https://github.com/"]
	extraheader = AUTHORIZATION: basic ` + base64.StdEncoding.EncodeToString([]byte("x-access-token:ghs_workflowtoken1234567890")) + `
[credential "https://example.com"]
	helper = "!f() { echo password=hunter2hunter2; }; f"
	username = someone
[url "https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.com/"]
	insteadOf = https://gitlab.com/
[user]
	email = me@example.com
`

func TestMaskHidesEveryCredential(t *testing.T) {
	masked, secrets := Mask([]byte(checkout))
	m := string(masked)
	for _, s := range []string{token, "ghs_workflowtoken1234567890", base64.StdEncoding.EncodeToString([]byte("x-access-token:ghs_workflowtoken1234567890")),
		"hunter2hunter2", "someone", "glpat-abcdefghijklmnopqrst"} {
		if strings.Contains(m, s) {
			t.Errorf("the masked copy still holds %q:\n%s", s, m)
		}
		if !slices.Contains(secrets, s) && !strings.Contains(strings.Join(secrets, "\n"), s) {
			t.Errorf("the secrets miss %q: %q", s, secrets)
		}
	}
	for _, keep := range []string{
		"url = https://me:" + Masked + "@github.com/o/r.git",
		"url = https://" + Masked + "@example.com/r.git",
		"pushurl = ssh://git@example.com/r.git",
		"extraheader = AUTHORIZATION: " + Masked,
		"helper = " + Masked,
		`[url "https://oauth2:` + Masked + `@gitlab.com/"]`,
		"email = me@example.com",
		"fetch = +refs/heads/*:refs/remotes/origin/*",
	} {
		if !strings.Contains(m, keep) {
			t.Errorf("the masked copy lacks %q:\n%s", keep, m)
		}
	}
	if strings.Count(m, "\n") != strings.Count(checkout, "\n") {
		t.Errorf("lines were lost:\n%s", m)
	}
}

func TestMaskLeavesAnOrdinaryConfig(t *testing.T) {
	for _, c := range []string{
		"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:o/r.git\n",
		"[remote \"origin\"]\n\turl = https://github.com/o/r.git\n[user]\n\temail = me@example.com\n",
		"[remote \"origin\"]\n\turl = https://git@example.com/r.git\n",
	} {
		if got, secrets := Mask([]byte(c)); string(got) != c || len(secrets) != 0 {
			t.Errorf("Mask(%q) = %q, %q; want it unchanged", c, got, secrets)
		}
	}
}

func TestMaskFollowsGitsSyntax(t *testing.T) {
	for _, c := range []struct{ in, secret, want string }{
		{"[http] extraheader = Authorization: Bearer tok123456789\n", "tok123456789", "[http] extraheader = Authorization: " + Masked + "\n"},
		{"[HTTP \"https://h/\"]\n\tExtraHeader=Authorization: bearer tok123456789\n", "tok123456789", "\tExtraHeader=Authorization: " + Masked + "\n"},
		{"[http.https://h/]\n\textraheader = Authorization: bearer \\\n\ttok123456789\n[core]\n", "tok123456789", "\textraheader = Authorization: " + Masked + "\n[core]\n"},
		{"[credential]\n\thelper = store\n", "", "\thelper = " + Masked + "\n"},
		{"[remote \"o\"]\n\turl = \"https://u:pa%20ss@h/x\"\n", "pa%20ss", "url = \"https://u:" + Masked + "@h/x\""},
		{"[remote \"o\"]\r\n\turl = https://u:secretpw@h/x\r\n", "secretpw", "\turl = https://u:" + Masked + "@h/x\r\n"},
	} {
		got, _ := Mask([]byte(c.in))
		if c.secret != "" && strings.Contains(string(got), c.secret) {
			t.Errorf("Mask(%q) = %q: the secret is left", c.in, got)
		}
		if c.want != "" && !strings.Contains(string(got), c.want) {
			t.Errorf("Mask(%q) = %q, want it to hold %q", c.in, got, c.want)
		}
	}
}

func TestIsConfigPath(t *testing.T) {
	for p, want := range map[string]bool{
		".git/config": true, "sub/.git/config": true, ".git/modules/lib/config": true, ".git/worktrees/t/config.worktree": true,
		".git/config.worktree": true, "srv/repo.git/config": true, "/abs/p/.git/config": true, ".git/./config": true,
		"config": false, "app/config": false, ".gitconfig": false, ".git/hooks/pre-commit": false, ".github/config": false,
		".git/config/x": false,
	} {
		if got := IsConfigPath(p); got != want {
			t.Errorf("IsConfigPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSecretsReadsTheProjectsRepository(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git", "modules", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte(checkout), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "modules", "lib", "config"), []byte("[remote \"o\"]\n\turl = https://u:modulepass1@h/x\n"), 0o644)
	got := Secrets(afero.NewOsFs(), root)
	for _, s := range []string{token, "ghs_workflowtoken1234567890", "modulepass1"} {
		if !slices.Contains(got, s) {
			t.Errorf("Secrets misses %q: %q", s, got)
		}
	}
	// A linked worktree: its .git file leads to the main repository.
	wt := t.TempDir()
	admin := filepath.Join(root, ".git", "worktrees", "t")
	os.MkdirAll(admin, 0o755)
	os.WriteFile(filepath.Join(admin, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+admin+"\n"), 0o644)
	if got := Secrets(afero.NewOsFs(), wt); !slices.Contains(got, token) {
		t.Errorf("a linked worktree's Secrets miss the main repository's: %q", got)
	}
}
