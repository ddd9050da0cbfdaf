package kept

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestRulesMatchAsGitignoreDoes: a Read(…) rule is read by
// memory/pathrule (whose test holds the table of patterns) and matched
// as a directory whatever the path is, since the door refuses by name:
// Read(./secrets/**) refuses the directory itself and Read(secrets/) a
// file so named. A relative rule is the root's and, once the door has
// it, the starting directory's; one may climb; a rule ralph cannot place
// is an error.
func TestRulesMatchAsGitignoreDoes(t *testing.T) {
	root, home := "/p", "/h"
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{"./.env", []string{"/p/.env", "/p/.ENV", "/p/a/.env"}, []string{"/p/.env.local", "/q/.env"}},
		{"./secrets/**", []string{"/p/secrets", "/p/secrets/a", "/p/secrets/a/b.key"}, []string{"/p/secretsx", "/p/a/secrets/x"}},
		{"secrets/", []string{"/p/secrets", "/p/secrets/x", "/p/a/secrets"}, []string{"/p/secretsx"}},
		{"/secrets/", []string{"/p/secrets", "/p/secrets/x", "/secrets"}, []string{"/p/a/secrets"}},
		{"//etc/app/secret", []string{"/etc/app/secret", "/etc/app/secret/x"}, []string{"/p/etc/app/secret"}},
		{"~/.netrc", []string{"/h/.netrc"}, []string{"/p/.netrc"}},
		{"../shared/.env", []string{"/shared/.env"}, []string{"/p/shared/.env"}},
		{"..", []string{"/p", "/q/x"}, nil},
	} {
		r, err := ParseRule(c.pattern, "deny", home)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		for _, p := range c.yes {
			if !r.matches(root, p) {
				t.Errorf("Read(%s) does not match %s", c.pattern, p)
			}
		}
		for _, p := range c.no {
			if r.matches(root, p) {
				t.Errorf("Read(%s) matches %s", c.pattern, p)
			}
		}
	}
	d := New(Options{Root: root, Home: home, Cwd: "/p/sub"})
	r, _ := ParseRule("./config/*.json", "deny", home)
	d.Deny(r)
	for _, p := range []string{"/p/config/a.json", "/p/sub/config/a.json"} {
		if _, ok := d.Rules().Match(root, p); !ok {
			t.Errorf("Read(./config/*.json), started in /p/sub, does not match %s", p)
		}
	}
	for _, bad := range []string{"", " ", "~other/x", "a\x00b"} {
		if _, err := ParseRule(bad, "deny", home); !errors.Is(err, ErrBadRule) {
			t.Errorf("Read(%q) was taken: %v", bad, err)
		}
	}
	if _, err := ParseRule("~/.netrc", "deny", ""); !errors.Is(err, ErrBadRule) {
		t.Errorf("Read(~/.netrc) without a home was taken: %v", err)
	}
}

func TestResolveFindsTheUppermostMatches(t *testing.T) {
	root := realDir(t)
	for _, f := range []string{".env", "a/.env", "secrets/x.key", "secrets/deep/y.key", "keep.txt", ".git/.env"} {
		write(t, filepath.Join(root, f), "x")
	}
	os.Symlink(filepath.Join(root, "keep.txt"), filepath.Join(root, "linked.env"))
	var rules Rules
	for _, p := range []string{".env", "./secrets/**", "./linked.env"} {
		r, err := ParseRule(p, "deny", "")
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	got, complete := rules.Resolve(root)
	want := []string{filepath.Join(root, ".env"), filepath.Join(root, "a/.env"), filepath.Join(root, "keep.txt"), filepath.Join(root, "linked.env"), filepath.Join(root, "secrets")}
	if !complete || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resolved %q (complete %v), want %q", got, complete, want)
	}
	// A rule covering the whole project (Read(**)) or a directory
	// holding it (Read(..)) hides what is in the project, never the
	// project itself.
	for _, p := range []string{"**", "./", ".."} {
		r, _ := ParseRule(p, "deny", "")
		got, _ := Rules{r}.Resolve(root)
		if slices.ContainsFunc(got, func(g string) bool { return within(g, root) }) || !slices.Contains(got, filepath.Join(root, "secrets")) {
			t.Errorf("Read(%s) resolved to %q", p, got)
		}
	}
}

func TestDoorRefusesKeptAndDeniedFilesByWhatTheyAre(t *testing.T) {
	base := realDir(t)
	root, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	write(t, filepath.Join(home, ".ssh", "id_rsa"), "PRIVATE")
	write(t, filepath.Join(root, ".env"), "TOKEN=1")
	write(t, filepath.Join(root, "ok.md"), "fine")
	os.Symlink(".env", filepath.Join(root, "dotenv.md"))
	d := New(Options{Root: root, Kept: []string{filepath.Join(home, ".ssh")}, Home: home})
	r, _ := ParseRule("./.env", `permissions.deny "Read(./.env)" in ~/.claude/settings.json`, home)
	d.Deny(r)
	fsys, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if txt, err := d.ReadSmall(fsys, filepath.Join(root, "ok.md"), 100); err != nil || string(txt.Data) != "fine" {
		t.Fatalf("an ordinary file: %q %v", txt.Data, err)
	}
	for _, name := range []string{".env", "dotenv.md"} {
		_, err := d.ReadSmall(fsys, filepath.Join(root, name), 100)
		var de *DeniedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), `permissions.deny "Read(./.env)"`) {
			t.Errorf("%s: %v, want the rule's refusal", name, err)
		}
	}
	if _, err := d.ReadSmall(rootfs.Person(), filepath.Join(home, ".ssh", "id_rsa"), 100); !errors.Is(err, ErrKept) {
		t.Errorf("the person's key: %v, want ErrKept", err)
	}
}

func TestDoorMasksTheRepositorysConfigurationByIdentity(t *testing.T) {
	root := realDir(t)
	git(t, root, "init", "-q")
	git(t, root, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0LXRva2VuLXZhbHVl")
	git(t, root, "config", "remote.origin.url", "https://me:ghp_e2eDoorToken0123456789abcdefABCDEF@github.com/o/r.git")
	write(t, filepath.Join(root, "ci.conf"), "[http]\n\textraheader = AUTHORIZATION: bearer included-secret-value\n")
	git(t, root, "config", "include.path", "../ci.conf")
	os.Symlink(".git/config", filepath.Join(root, "gitconf"))
	if err := os.Link(filepath.Join(root, ".git", "config"), filepath.Join(root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	fsys, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	d := New(Options{Root: root})
	for _, name := range []string{".git/config", "gitconf", "hard.txt", "ci.conf"} {
		txt, err := d.ReadHead(fsys, filepath.Join(root, name), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := string(txt.Data)
		if !txt.Masked || strings.Contains(s, "ghp_e2eDoorToken") || strings.Contains(s, "c2VjcmV0") || strings.Contains(s, "included-secret") || !strings.Contains(s, "extraheader = AUTHORIZATION: [REDACTED]") {
			t.Errorf("%s was not masked (masked %v):\n%s", name, txt.Masked, s)
		}
	}
	for _, name := range []string{".git/config", "gitconf", "hard.txt", ".git/HEAD"} {
		if _, err := d.ReadImport(fsys, filepath.Join(root, name), 1<<20); !errors.Is(err, ErrGitDir) {
			t.Errorf("an import of %s: %v, want ErrGitDir", name, err)
		}
	}
	if txt, err := d.ReadImport(fsys, filepath.Join(root, "ci.conf"), 1<<20); err != nil || !txt.Masked {
		t.Errorf("an import of the included file: masked %v, %v", txt.Masked, err)
	}
}

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestValuesAreWhatLooksLikeASecret: the values Values takes from the
// files a rule names are a dotenv or YAML line's value, quotes trimmed,
// or the whole line, and only what looks like a secret: a setting such
// as "development" would garble every result it was redacted from.
func TestValuesAreWhatLooksLikeASecret(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".env"), "# a comment\nNODE_ENV=development\nexport API_TOKEN=\"sk-test-1234abcd\"\nPORT=8080\nDB: postgres://u:p4ss@db/x\n")
	write(t, filepath.Join(root, "secrets", "vault.txt"), "correcthorsebatterystaple-and-more\n")
	write(t, filepath.Join(root, "notes.txt"), "NOT=secret-but-unnamed-1234\n")
	var rules Rules
	for _, p := range []string{"./.env", "./secrets/**"} {
		r, err := ParseRule(p, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	got := rules.Values(root)
	want := []string{"sk-test-1234abcd", "postgres://u:p4ss@db/x", "correcthorsebatterystaple-and-more"}
	if !slices.Equal(got, want) {
		t.Errorf("Values = %q, want %q", got, want)
	}
}

// TestAHardLinkToADeniedFileIsRefused: a second name for a file a
// Read(…) rule names (`ln .env CLAUDE.md`, which the Landlock-only
// fallback cannot stop) is refused as the file is, by what it is.
func TestAHardLinkToADeniedFileIsRefused(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".env"), "TOKEN=x\n")
	write(t, filepath.Join(root, "secrets", "vault.txt"), "vault\n")
	write(t, filepath.Join(root, "notes.md"), "ordinary\n")
	for old, name := range map[string]string{".env": "CLAUDE.md", "secrets/vault.txt": "v.md"} {
		if err := os.Link(filepath.Join(root, old), filepath.Join(root, name)); err != nil {
			t.Skip("no hard links here:", err)
		}
	}
	d := New(Options{Root: root})
	for _, p := range []string{"./.env", "./secrets/**"} {
		r, err := ParseRule(p, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		d.Deny(r)
	}
	fsys := rootfs.Person()
	for _, name := range []string{"CLAUDE.md", "v.md"} {
		if _, err := d.ReadSmall(fsys, filepath.Join(root, name), 1<<10); !errors.Is(err, ErrDenied) {
			t.Errorf("%s, a hard link to a denied file: %v, want ErrDenied", name, err)
		}
	}
	if txt, err := d.ReadSmall(fsys, filepath.Join(root, "notes.md"), 1<<10); err != nil || string(txt.Data) != "ordinary\n" {
		t.Errorf("an ordinary file: %q, %v", txt.Data, err)
	}
}

// TestARenamedDeniedFileIsRefused: a file a rule named when the session
// started is refused by what it is after a command renamed it, or the
// directory above it (`mv config cfg2`): the checkpoint took
// cfg2/prod.env in (its withholding asks Refuses), and read_file read it
// (the attack's REPRO-6).
func TestARenamedDeniedFileIsRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "config", "prod.env"), "db=PRODSECRET-xyz-0987654321\n")
	write(t, filepath.Join(root, ".env"), "TOKEN=x\n")
	write(t, filepath.Join(root, "notes.md"), "ordinary\n")
	d := New(Options{Root: root})
	for _, p := range []string{"./config/prod.env", "./.env"} {
		r, err := ParseRule(p, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		d.Deny(r)
	}
	for old, now := range map[string]string{"config": "cfg2", ".env": "env.txt"} {
		if err := os.Rename(filepath.Join(root, old), filepath.Join(root, now)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cfg2/prod.env", "env.txt"} {
		abs := filepath.Join(root, name)
		if err := d.Refuses(abs); !errors.Is(err, ErrDenied) {
			t.Errorf("Refuses(%s), a denied file renamed: %v, want ErrDenied", name, err)
		}
		if _, err := d.ReadSmall(rootfs.Person(), abs, 1<<10); !errors.Is(err, ErrDenied) {
			t.Errorf("ReadSmall(%s), a denied file renamed: %v, want ErrDenied", name, err)
		}
	}
	if err := d.Refuses(filepath.Join(root, "notes.md")); err != nil {
		t.Errorf("an ordinary file: %v", err)
	}
}
