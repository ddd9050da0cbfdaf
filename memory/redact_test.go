package memory

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

func TestRedactor(t *testing.T) {
	const key = `sk-abc"def\ghi<&>`
	r := NewRedactor(key, "short", "")
	for in, want := range map[string]string{
		"key " + key + " end":                       "key [REDACTED] end",
		`json "sk-abc\"def\\ghi\u003c\u0026\u003e"`: `json "[REDACTED]"`,
		`json "sk-abc\"def\\ghi<&>"`:                `json "[REDACTED]"`,
		"short words stay":                          "short words stay",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if !r.Contains("x"+key) || r.Contains("nothing") {
		t.Error("Contains")
	}
	var none *Redactor
	if none.Redact(key) != key || NewRedactor().Redact(key) != key || none.Contains(key) {
		t.Error("a nil or empty Redactor must change nothing")
	}
}

func TestEnsureStateDirWritesGitignoreOnce(t *testing.T) {
	for name, fs := range map[string]afero.Fs{"mem": afero.NewMemMapFs(), "os": afero.NewOsFs()} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "p")
			if name == "mem" {
				root = "/p"
			}
			if err := fs.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			lock, err := AcquireLock(fs, root, "s1", false)
			if err != nil {
				t.Fatal(err)
			}
			lock.Release()
			path := filepath.Join(root, StateDir, ".gitignore")
			got, err := afero.ReadFile(fs, path)
			if err != nil || string(got) != stateGitignore {
				t.Fatalf(".gitignore = %q, %v", got, err)
			}
			// A person's edit, or their deleting the file, is kept.
			if err := afero.WriteFile(fs, path, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := EnsureStateDir(fs, root); err != nil {
				t.Fatal(err)
			}
			if got, _ := afero.ReadFile(fs, path); string(got) != "mine\n" {
				t.Fatalf("edited .gitignore became %q", got)
			}
			fs.Remove(path)
			if _, err := AcquireLock(fs, root, "s2", false); err != nil {
				t.Fatal(err)
			}
			if _, err := fs.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("a removed .gitignore came back: %v", err)
			}
		})
	}
}

// TestStateGitignoreKeepsOnlyConfig asks git itself what the created
// .gitignore leaves out.
func TestStateGitignoreKeepsOnlyConfig(t *testing.T) {
	git, err := lookGit()
	if err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	if out, err := git(root, "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	fs := afero.NewOsFs()
	if err := EnsureStateDir(fs, root); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.toml", "history", "session.json", "session.lock", "sessions/x/transcript.md"} {
		p := filepath.Join(root, StateDir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	out, err := git(root, "add", "--dry-run", ".")
	if err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	if got := strings.TrimSpace(out); got != "add '.ralph/config.toml'" {
		t.Fatalf("git would add:\n%s", got)
	}
}

// lookGit returns a runner for git in a directory, with no user config.
func lookGit() (func(dir string, args ...string) (string, error), error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, err
	}
	return func(dir string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}, nil
}

// TestLockFileRedactsTheKey: a prompt given as an argument lands in the
// lock file's command line, without the key.
func TestLockFileRedactsTheKey(t *testing.T) {
	const key = "sk-lock-0123456789abcdef"
	old := os.Args
	os.Args = []string{"ralph", "--json", strings.Repeat("x", 150) + " my key is " + key}
	defer func() { os.Args = old }()
	root := t.TempDir()
	lock, err := AcquireLock(afero.NewOsFs(), root, "s", false, key)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	data, _ := os.ReadFile(filepath.Join(root, LockFile))
	if strings.Contains(string(data), key) || !strings.Contains(string(data), "[REDACTED]") || !strings.Contains(string(data), "xxx") {
		t.Fatalf("lock file:\n%s", data)
	}
}
